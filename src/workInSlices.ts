/**
 * Work written once as steps (a generator that yields between pieces of a millisecond or two), run either at
 * once or in slices between which the event loop serves everything else. A server builds what a change to
 * the store needs (the index of a publisher just synced) in slices, so that no request waits behind it for
 * more than a slice; a command, or a server before it listens, runs the same steps at once.
 */
export type Steps<T> = Generator<void, T, void>

/** Each slice runs steps for about this long before the event loop gets its turn. */
const SLICE_MS = 4

/** Runs every step now. */
export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/** Runs the steps in slices of about SLICE_MS, each in an event-loop turn of its own. */
export async function runInSlices<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const until = performance.now() + SLICE_MS
    for (;;) {
      const step = steps.next()
      if (step.done) return step.value
      if (performance.now() >= until) break
    }
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
