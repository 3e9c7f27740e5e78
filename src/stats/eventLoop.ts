import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'

/** What a serving process says of itself in a report: how long its event loop kept callbacks waiting lately. */
export interface ServerReport {
  pid: number
  startedAt: number
  /** Event-loop delay over the last 10 to 20 seconds, in ms. */
  loopP99Ms: number
  loopMaxMs: number
}

/** How often the loop is sampled, in ms: each sample is a timer that should fire this long after the last. */
const RESOLUTION_MS = 5
/**
 * Samples are kept this long before they start again: a report every second then covers 10 to 20 s, so a
 * stall stays in view for a while whenever svc top looks.
 */
const WINDOW_MS = 10_000

/**
 * The event-loop delay of this process (perf_hooks.monitorEventLoopDelay), read per report over a window that
 * starts again every WINDOW_MS. The histogram holds the time between samples, the sampling interval included: the delay is what exceeds it
 * (as @fastify/under-pressure reads it), so an idle loop reads near 0 and a 50 ms block about 45-50 ms.
 */
export class EventLoopWatch {
  readonly #delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  readonly #startedAt: number
  #windowStarted = performance.now()

  constructor(now: number) {
    this.#startedAt = now
    this.#delay.enable()
  }

  report(): ServerReport {
    const toMs = (ns: number) =>
      Number.isFinite(ns) ? Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100) : 0
    const report = {
      pid: process.pid,
      startedAt: this.#startedAt,
      loopP99Ms: toMs(this.#delay.percentile(99)),
      loopMaxMs: toMs(this.#delay.max),
    }
    if (performance.now() - this.#windowStarted >= WINDOW_MS) {
      this.#delay.reset()
      this.#windowStarted = performance.now()
    }
    return report
  }

  stop(): void {
    this.#delay.disable()
  }
}
