/** Exit codes of a process stopped by a signal, as shells report them (128 + the signal's number). */
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const

/** How long an interrupted import has to remove what it wrote before the process exits anyway. */
const CLEANUP_MS = 2_000

/**
 * Runs an import so that Ctrl-C (SIGINT) or SIGTERM stops it within 2 s: the work is aborted through its
 * signal (an import then removes its partial release, side files included, or rolls its transaction back),
 * the user is told the previous data is kept, and the process exits 130 or 143. Whatever a forced exit
 * leaves behind, the next import clears.
 */
export async function interruptible<T>(
  work: (signal: AbortSignal) => Promise<T>,
  say: (line: string) => void,
): Promise<T> {
  const controller = new AbortController()
  let received: keyof typeof EXIT_CODES | undefined
  const stop = (signal: keyof typeof EXIT_CODES) => {
    if (received) process.exit(EXIT_CODES[signal])
    received = signal
    say(`${signal === 'SIGINT' ? 'Interrupted' : 'Terminated'}: the import stops; the previous data is kept.`)
    controller.abort(new Error(`${signal} received`))
    setTimeout(() => process.exit(EXIT_CODES[signal]), CLEANUP_MS).unref()
  }
  const onInt = () => stop('SIGINT')
  const onTerm = () => stop('SIGTERM')
  process.on('SIGINT', onInt)
  process.on('SIGTERM', onTerm)
  try {
    return await work(controller.signal)
  } catch (error) {
    if (received) process.exit(EXIT_CODES[received])
    throw error
  } finally {
    process.off('SIGINT', onInt)
    process.off('SIGTERM', onTerm)
  }
}
