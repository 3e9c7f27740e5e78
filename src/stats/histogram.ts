/**
 * Latency histogram with logarithmic bins 2% wide, from 0.01 ms to about 17 minutes: percentiles over any
 * number of requests cost one pass to count and one walk over the bins, with at most 1% error, where
 * sorting every duration of a busy window each second would not be cheap.
 */
const MIN_MS = 0.01
const GROWTH = 1.02
const LOG_GROWTH = Math.log(GROWTH)
/** How many bins a histogram has. */
export const BINS = 1 + Math.ceil(Math.log(1e6 / MIN_MS) / LOG_GROWTH)

export function latencyBin(ms: number): number {
  if (!(ms > MIN_MS)) return 0
  return Math.min(BINS - 1, 1 + Math.floor(Math.log(ms / MIN_MS) / LOG_GROWTH))
}

/** The geometric middle of a bin: within 1% of any duration that fell in it. */
const binValue = (bin: number) => (bin === 0 ? MIN_MS : MIN_MS * GROWTH ** (bin - 0.5))

export interface Percentiles {
  p50Ms: number
  p95Ms: number
  p99Ms: number
}

export class LatencyHistogram {
  readonly #counts = new Uint32Array(BINS)
  count = 0

  add(bin: number, count = 1): void {
    this.#counts[bin] = (this.#counts[bin] ?? 0) + count
    this.count += count
  }

  /** Takes out one duration added before. */
  remove(bin: number): void {
    this.#counts[bin] = (this.#counts[bin] ?? 0) - 1
    this.count--
  }

  merge(other: LatencyHistogram): void {
    for (let bin = 0; bin < BINS; bin++)
      this.#counts[bin] = (this.#counts[bin] ?? 0) + (other.#counts[bin] ?? 0)
    this.count += other.count
  }

  /** Nearest-rank percentile; null when nothing was counted. */
  percentile(p: number): number | null {
    if (this.count === 0) return null
    const rank = Math.max(1, Math.ceil((p / 100) * this.count))
    let seen = 0
    for (let bin = 0; bin < BINS; bin++) {
      seen += this.#counts[bin] ?? 0
      if (seen >= rank) return binValue(bin)
    }
    return binValue(BINS - 1)
  }

  percentiles(): Percentiles | null {
    if (this.count === 0) return null
    return {
      p50Ms: this.percentile(50) as number,
      p95Ms: this.percentile(95) as number,
      p99Ms: this.percentile(99) as number,
    }
  }
}
