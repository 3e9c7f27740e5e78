import type { Db } from '../db/open.js'
import { BINS, latencyBin, LatencyHistogram, type Percentiles } from './histogram.js'

/** What one serving process saw in its last minute, as it reports it (server_processes). */
export interface MinuteSummary {
  requests: number
  /** 5xx answers among them. */
  failed: number
  /** Latency histogram bins (histogram.ts) with a count: [bin, count] pairs. */
  bins: [number, number][]
}

interface Second {
  second: number
  requests: number
  failed: number
  /** Requests per latency bin: an array, so that counting a request is one increment. */
  bins: Uint32Array
}

const SECONDS = 60

/**
 * The last minute of this process's requests, per second: counts, 5xx and latency bins. Adding a request
 * costs a bin lookup; the minute is summed only when the process reports (once a second), so that the
 * dashboard's live figures cost the server a row read per process instead of reading the request log.
 */
export class LiveMinute {
  readonly #seconds: Second[] = Array.from({ length: SECONDS }, () => ({
    second: -1,
    requests: 0,
    failed: 0,
    bins: new Uint32Array(BINS),
  }))

  add(at: number, status: number, durationMs: number): void {
    const second = Math.floor(at / 1000)
    const slot = this.#seconds[((second % SECONDS) + SECONDS) % SECONDS] as Second
    if (slot.second !== second) {
      slot.second = second
      slot.requests = 0
      slot.failed = 0
      slot.bins.fill(0)
    }
    slot.requests++
    if (status >= 500) slot.failed++
    const bin = latencyBin(durationMs)
    slot.bins[bin] = (slot.bins[bin] as number) + 1
  }

  /** The 60 seconds up to `now`. */
  summary(now: number): MinuteSummary {
    const last = Math.floor(now / 1000)
    let requests = 0
    let failed = 0
    const counts = new Uint32Array(BINS)
    for (const slot of this.#seconds) {
      if (slot.second <= last - SECONDS || slot.second > last || slot.requests === 0) continue
      requests += slot.requests
      failed += slot.failed
      for (let bin = 0; bin < BINS; bin++) counts[bin] = (counts[bin] as number) + (slot.bins[bin] as number)
    }
    const bins: [number, number][] = []
    counts.forEach((count, bin) => {
      if (count > 0) bins.push([bin, count])
    })
    return { requests, failed, bins }
  }
}

/** Every process's minute together: requests, the 5xx rate and latency percentiles. */
export function mergeMinutes(minutes: readonly MinuteSummary[]): {
  requests: number
  failed: number
  latency: Percentiles | null
} {
  const histogram = new LatencyHistogram()
  let requests = 0
  let failed = 0
  for (const minute of minutes) {
    requests += minute.requests
    failed += minute.failed
    for (const [bin, count] of minute.bins) histogram.add(bin, count)
  }
  return { requests, failed, latency: histogram.percentiles() }
}

/** A serving process reports once a second; one not heard from for this long is gone (as svc top reads it). */
export const SERVER_SEEN_MS = 5000

/** The last minute of every serving process heard from lately, together. */
export function readLiveMinute(live: Db, now: number): ReturnType<typeof mergeMinutes> {
  const rows = live
    .statement(
      `SELECT minute_requests AS requests, minute_failed AS failed, minute_latency AS bins
         FROM server_processes WHERE seen_at >= ?`,
    )
    .all(now - SERVER_SEEN_MS) as { requests: number; failed: number; bins: string }[]
  return mergeMinutes(rows.map((row) => ({ ...row, bins: JSON.parse(row.bins) as [number, number][] })))
}
