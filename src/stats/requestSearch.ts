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

/**
 * One page of the request log, newest first, and the cursor of the next. Keyset paging on (at, rowid), the
 * order of the `at` index (and of `(org_id, at)` when an organization is chosen), so that a page costs the
 * rows it walks, not the rows before it.
 */
export function searchRequests(
  live: Db,
  filter: RequestFilter,
  after?: RequestCursor,
): { rows: ListedRequest[]; next: RequestCursor | undefined } {
  const where: string[] = []
  const params: (string | number)[] = []
  const condition = (sql: string, ...values: (string | number)[]) => {
    where.push(sql)
    params.push(...values)
  }
  if (filter.orgId !== undefined) condition('org_id = ?', filter.orgId)
  if (filter.keyId) condition('key_id = ?', filter.keyId)
  const bounds = filter.status ? statusBounds(filter.status) : undefined
  if (bounds) condition('status BETWEEN ? AND ?', ...bounds)
  if (filter.pathPrefix) condition('substr(path, 1, ?) = ?', filter.pathPrefix.length, filter.pathPrefix)
  if (filter.from !== undefined) condition('at >= ?', filter.from)
  if (filter.to !== undefined) condition('at < ?', filter.to)
  if (after) condition('(at < ? OR (at = ? AND rowid < ?))', after.at, after.at, after.rowid)
  const rows = live
    .prepare(
      `SELECT rowid, request_id AS requestId, at, org_id AS orgId, key_id AS keyId, method, path, status,
              duration_ms AS durationMs, bytes
         FROM request_log ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY at DESC, rowid DESC LIMIT ${REQUESTS_PAGE + 1}`,
    )
    .all(...params) as (ListedRequest & { rowid: number })[]
  const more = rows.length > REQUESTS_PAGE
  const page = rows.slice(0, REQUESTS_PAGE)
  const last = page.at(-1)
  return {
    rows: page.map(({ rowid: _, ...row }) => row),
    next: more && last ? { at: last.at, rowid: last.rowid } : undefined,
  }
}

export interface HourTally {
  hour: number
  requests: number
  limited: number
  failed: number
}

/**
 * Requests per clock hour from `since` (ms), for one organization or all, from request_hours; with all,
 * requests refused before a key or route was found (request_tallies, per minute) are added.
 */
export function requestsByHour(live: Db, since: number, orgId?: number): HourTally[] {
  const fromHour = Math.floor(since / 3_600_000)
  const served =
    orgId === undefined
      ? (live
          .prepare(
            `SELECT hour, sum(requests) AS requests, sum(limited) AS limited, sum(failed) AS failed
               FROM request_hours WHERE hour >= ? GROUP BY hour`,
          )
          .all(fromHour) as HourTally[])
      : (live
          .prepare('SELECT hour, requests, limited, failed FROM request_hours WHERE hour >= ? AND org_id = ?')
          .all(fromHour, orgId) as HourTally[])
  const byHour = new Map(served.map((tally) => [tally.hour, tally]))
  if (orgId === undefined) {
    const refused = live
      .prepare(
        `SELECT minute / 60 AS hour, sum(count) AS requests, sum(CASE WHEN status = 429 THEN count ELSE 0 END) AS limited,
                sum(CASE WHEN status >= 500 THEN count ELSE 0 END) AS failed
           FROM request_tallies WHERE minute >= ? GROUP BY 1`,
      )
      .all(fromHour * 60) as HourTally[]
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

/** Hourly tallies summed into buckets of `bucketHours` from `since`, every bucket present (zeros included). */
export function bucketed(
  tallies: readonly HourTally[],
  since: number,
  buckets: number,
  bucketHours: number,
): HourTally[] {
  const firstHour = Math.floor(since / 3_600_000)
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
