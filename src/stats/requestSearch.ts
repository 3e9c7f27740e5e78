import type { Db } from '../db/open.js'

/** What the dashboard's request list filters on; every field optional. */
export interface RequestFilter {
  orgId?: number
  keyId?: string
  /** `2xx`…`5xx`, or one status. */
  status?: string
  pathPrefix?: string
  from?: number
  to?: number
}

export interface ListedRequest {
  requestId: string
  at: number
  orgId: number | null
  keyId: string | null
  method: string
  path: string
  status: number
  durationMs: number
  bytes: number
}

/** Where the next page starts: the last row's time and rowid (request_log_at orders by both). */
export interface RequestCursor {
  at: number
  rowid: number
}

export const REQUESTS_PAGE = 50

/** A status filter as SQL bounds: `4xx` → 400..499, `404` → 404..404; undefined when it is neither. */
export function statusBounds(status: string): [number, number] | undefined {
  const cls = /^([1-5])xx$/i.exec(status)
  if (cls) return [Number(cls[1]) * 100, Number(cls[1]) * 100 + 99]
  if (/^[1-5]\d\d$/.test(status)) return [Number(status), Number(status)]
  return undefined
}

/** Rows a page walks at most, in index order, looking for matches: a page's cost is bounded whatever it asks. */
export const SCAN_LIMIT = 50_000

/** SQL conditions and their parameters, built one at a time. */
class Conditions {
  readonly sql: string[] = []
  readonly params: (string | number)[] = []
  add(sql: string, ...values: (string | number)[]): void {
    this.sql.push(sql)
    this.params.push(...values)
  }
  where(): string {
    return this.sql.length > 0 ? `WHERE ${this.sql.join(' AND ')}` : ''
  }
}

export interface RequestPage {
  rows: ListedRequest[]
  /** Where the next (older) page starts; undefined when nothing older is left to walk. */
  next: RequestCursor | undefined
  /** True when the page stopped at SCAN_LIMIT rows walked: older rows were not looked at yet. */
  walkedLimit: boolean
}

const COLUMNS = `rowid AS rid, request_id AS requestId, at, org_id AS orgId, key_id AS keyId, method, path, status,
  duration_ms AS durationMs, bytes`

/**
 * One page of the request log, newest first, and the cursor of the next. Keyset paging on (at, rowid), the
 * order of the `at` index (and of `(org_id, at)` when an organization is chosen). The index picks the rows
 * (organization, time range, cursor); the other filters (key, status, path) are checked on at most
 * SCAN_LIMIT of them, so that a rare match costs a bounded walk and the page says where it stopped.
 */
export function searchRequests(live: Db, filter: RequestFilter, after?: RequestCursor): RequestPage {
  const indexed = new Conditions()
  if (filter.orgId !== undefined) indexed.add('org_id = ?', filter.orgId)
  if (filter.from !== undefined) indexed.add('at >= ?', filter.from)
  if (filter.to !== undefined) indexed.add('at < ?', filter.to)
  if (after) indexed.add('(at < ? OR (at = ? AND rowid < ?))', after.at, after.at, after.rowid)
  const checked = new Conditions()
  if (filter.keyId) checked.add('keyId = ?', filter.keyId) // the walk's column names
  const bounds = filter.status ? statusBounds(filter.status) : undefined
  if (bounds) checked.add('status BETWEEN ? AND ?', ...bounds)
  if (filter.pathPrefix) checked.add('substr(path, 1, ?) = ?', filter.pathPrefix.length, filter.pathPrefix)

  const walk = `SELECT ${COLUMNS} FROM request_log ${indexed.where()} ORDER BY at DESC, rowid DESC`
  const rows = (
    checked.sql.length === 0
      ? live.prepare(`${walk} LIMIT ${REQUESTS_PAGE + 1}`).all(...indexed.params)
      : live
          .prepare(
            `SELECT * FROM (${walk} LIMIT ${SCAN_LIMIT}) ${checked.where()} LIMIT ${REQUESTS_PAGE + 1}`,
          )
          .all(...indexed.params, ...checked.params)
  ) as (ListedRequest & { rid: number })[]
  const page = rows.slice(0, REQUESTS_PAGE).map(({ rid, ...row }) => ({ ...row, rowid: rid }))
  const last = page.at(-1)
  if (rows.length > REQUESTS_PAGE && last)
    return { rows: page.map(withoutRowid), next: { at: last.at, rowid: last.rowid }, walkedLimit: false }
  if (checked.sql.length === 0) return { rows: page.map(withoutRowid), next: undefined, walkedLimit: false }
  // Fewer matches than a page: either the log ends, or the walk did; then the next page starts past it.
  const edge = live
    .prepare(
      `SELECT at, rowid FROM request_log ${indexed.where()} ORDER BY at DESC, rowid DESC LIMIT 1 OFFSET ${SCAN_LIMIT - 1}`,
    )
    .get(...indexed.params) as RequestCursor | undefined
  return { rows: page.map(withoutRowid), next: edge, walkedLimit: edge !== undefined }
}

const withoutRowid = ({ rowid: _, ...row }: ListedRequest & { rowid: number }): ListedRequest => row

export interface HourTally {
  hour: number
  requests: number
  limited: number
  failed: number
}

/**
 * Requests per clock hour in [fromHour, toHour), for one organization or all, from request_hours; with all,
 * requests refused before a key or route was found (request_tallies, per minute) are added.
 */
export function requestsByHour(live: Db, fromHour: number, toHour: number, orgId?: number): HourTally[] {
  const served =
    orgId === undefined
      ? (live
          .statement(
            `SELECT hour, sum(requests) AS requests, sum(limited) AS limited, sum(failed) AS failed
               FROM request_hours WHERE hour >= ? AND hour < ? GROUP BY hour`,
          )
          .all(fromHour, toHour) as HourTally[])
      : (live
          .statement(
            'SELECT hour, requests, limited, failed FROM request_hours WHERE hour >= ? AND hour < ? AND org_id = ?',
          )
          .all(fromHour, toHour, orgId) as HourTally[])
  const byHour = new Map(served.map((tally) => [tally.hour, tally]))
  if (orgId === undefined) {
    const refused = live
      .statement(
        `SELECT minute / 60 AS hour, sum(count) AS requests, sum(CASE WHEN status = 429 THEN count ELSE 0 END) AS limited,
                sum(CASE WHEN status >= 500 THEN count ELSE 0 END) AS failed
           FROM request_tallies WHERE minute >= ? AND minute < ? GROUP BY 1`,
      )
      .all(fromHour * 60, toHour * 60) as HourTally[]
    for (const tally of refused) {
      const held = byHour.get(tally.hour)
      if (!held) byHour.set(tally.hour, tally)
      else {
        held.requests += tally.requests
        held.limited += tally.limited
        held.failed += tally.failed
      }
    }
  }
  return [...byHour.values()].sort((a, b) => a.hour - b.hour)
}

export const hourOf = (ms: number) => Math.floor(ms / 3_600_000)

/** An hour is settled once every server has flushed its last requests (about a second) with room to spare. */
const SETTLED_AFTER_MS = 2 * 60_000

/**
 * Every organization's requests per hour, for the overview's charts: hours that can no longer change are read
 * once and kept (summing a month of hourly rows per organization costs about 10 ms), the others each time.
 */
export class HourlyTotals {
  readonly #settled = new Map<number, HourTally>()
  /** Hours before this one are in #settled (those with requests). */
  #settledTo = -Infinity

  constructor(private readonly live: Db) {}

  read(since: number, now: number): HourTally[] {
    const fromHour = hourOf(since)
    const settledTo = hourOf(now - SETTLED_AFTER_MS)
    if (settledTo > this.#settledTo) {
      const start = Math.max(fromHour, this.#settledTo)
      for (const tally of requestsByHour(this.live, start, settledTo)) this.#settled.set(tally.hour, tally)
      this.#settledTo = settledTo
    }
    for (const hour of this.#settled.keys()) if (hour < fromHour - 24 * 31) this.#settled.delete(hour)
    const settled = [...this.#settled.values()].filter((tally) => tally.hour >= fromHour)
    return [...settled, ...requestsByHour(this.live, Math.max(fromHour, settledTo), hourOf(now) + 1)].sort(
      (a, b) => a.hour - b.hour,
    )
  }
}

/** Hourly tallies summed into buckets of `bucketHours` from `since`, every bucket present (zeros included). */
export function bucketed(
  tallies: readonly HourTally[],
  since: number,
  buckets: number,
  bucketHours: number,
): HourTally[] {
  const firstHour = hourOf(since)
  const out = Array.from({ length: buckets }, (_, index) => ({
    hour: firstHour + index * bucketHours,
    requests: 0,
    limited: 0,
    failed: 0,
  }))
  for (const tally of tallies) {
    const bucket = out[Math.floor((tally.hour - firstHour) / bucketHours)]
    if (!bucket) continue
    bucket.requests += tally.requests
    bucket.limited += tally.limited
    bucket.failed += tally.failed
  }
  return out
}
