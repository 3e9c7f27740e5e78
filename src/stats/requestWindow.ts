import { allEndpoints } from '../api/registry.js'
import { cachedStatement, type Db } from '../db/open.js'
import { Routes } from '../http/routes.js'
import { endpointGroup } from './endpointGroups.js'
import { LatencyHistogram, latencyBin, type Percentiles } from './histogram.js'

/** What `svc top` keeps of a logged request that falls in its window. */
interface WindowRow {
  at: number
  orgId: number | null
  /** `GET /v1/scheduling/slots`, or the method and `(unmatched)`. */
  endpoint: string
  status: number
  bin: number
}

export interface LoggedError {
  at: number
  status: number
  method: string
  path: string
  requestId: string
  orgId: number | null
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '429' | '5xx'

export interface WindowFigures {
  requests: number
  perSecondNow: number
  byClass: Record<StatusClass, number>
  latency: (Percentiles & { requests: number }) | null
  groups: ({ group: string; requests: number } & Percentiles)[]
  endpoints: {
    method: string
    route: string
    group: string
    requests: number
    errors: number
    p95Ms: number
  }[]
  orgs: Map<number | null, { requests: number; errors: number; rejected: number }>
  errors: LoggedError[]
  /** Requests a second in each bucket of the history, oldest first, every organization. */
  history: number[]
}

export const WINDOW_MS = 60_000
/** "Now" in requests a second is the last few seconds, so one burst does not read as the current rate. */
export const NOW_MS = 10_000
export const HISTORY_BUCKET_MS = 10_000
export const HISTORY_BUCKETS = 60
export const ERRORS_KEPT = 100
export const ERRORS_SINCE_MS = 15 * 60_000
/** The first look for recent errors reads at most this many of the newest rows, however rare errors are. */
const ERROR_SCAN_LIMIT = 200_000

const statusClass = (status: number): StatusClass =>
  status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx'

const isError = (status: number) => status >= 400

const ROW_COLUMNS = 'rowid, at, org_id, method, path, route, status, duration_ms, request_id'

/** The route shown for requests no declared endpoint matched. */
export const UNMATCHED = '(unmatched)'

/** Every query `svc top` runs on the request log; each reads through an index (test/top.test.tsx proves it). */
export const WINDOW_SQL = {
  lastRowId: 'SELECT max(rowid) AS id FROM request_log',
  // Index-only, as the two below: the history needs counts, the window its first row.
  history: `SELECT at / ${HISTORY_BUCKET_MS} AS bucket, count(*) AS n FROM request_log WHERE at > ? GROUP BY bucket`,
  firstRowId: 'SELECT min(rowid) AS id FROM request_log INDEXED BY request_log_at WHERE at > ?',
  // Rows are stored in about the order of `at`, so reading the window is one run along the table from its
  // first row; `+at` keeps SQLite from fetching each row through the `at` index instead, twice as slow.
  window: `SELECT ${ROW_COLUMNS} FROM request_log WHERE rowid >= ? AND +at > ?`,
  errors: `SELECT at, status, method, path, request_id AS requestId, org_id AS orgId
             FROM (SELECT rowid AS rowId, * FROM request_log WHERE at > ?
                    ORDER BY at DESC, rowid DESC LIMIT ${ERROR_SCAN_LIMIT})
            WHERE status >= 400 ORDER BY at DESC, rowId DESC LIMIT ${ERRORS_KEPT}`,
  since: `SELECT ${ROW_COLUMNS} FROM request_log WHERE rowid > ? ORDER BY rowid`,
}

/**
 * The recent part of the request log, read incrementally: the first refresh reads the window; every later
 * one reads only rows added since (by rowid, which SQLite hands out in commit order for this table), so
 * each second costs what the server wrote that second, whatever the log's size.
 */
export class RequestWindow {
  #rows: WindowRow[] = []
  #errors: LoggedError[] = []
  #history = new Map<number, number>()
  #lastRowId = -1
  readonly #endpointKeys = new Map<string, string>()

  constructor(private readonly live: Db) {}

  refresh(now: number): void {
    const maxRowId = this.#maxRowId()
    // Rowids only go back when the table was emptied (pruned to nothing, or the file replaced): start again.
    if (maxRowId < this.#lastRowId) this.#reset()
    if (this.#lastRowId < 0) this.#loadRecent(now)
    else if (maxRowId > this.#lastRowId) this.#loadSince(this.#lastRowId)
    this.#evict(now)
  }

  #maxRowId(): number {
    const row = cachedStatement(this.live, WINDOW_SQL.lastRowId).get() as { id: number | null }
    return row.id ?? 0
  }

  #reset(): void {
    this.#rows = []
    this.#errors = []
    this.#history.clear()
    this.#lastRowId = -1
  }

  #loadRecent(now: number): void {
    const read = this.live.transaction(() => {
      const from = Math.min(now - WINDOW_MS, now - HISTORY_BUCKETS * HISTORY_BUCKET_MS)
      const buckets = this.live.prepare(WINDOW_SQL.history).all(from) as { bucket: number; n: number }[]
      for (const { bucket, n } of buckets) this.#history.set(Math.floor(bucket), n)
      const first = this.live.prepare(WINDOW_SQL.firstRowId).get(now - WINDOW_MS) as { id: number | null }
      if (first.id !== null) {
        const rows = this.live
          .prepare(WINDOW_SQL.window)
          .raw()
          .all(first.id, now - WINDOW_MS) as SelectedRow[]
        for (const row of rows) this.#rows.push(this.#toRow(row))
      }
      this.#errors = this.live.prepare(WINDOW_SQL.errors).all(now - ERRORS_SINCE_MS) as LoggedError[]
      this.#lastRowId = this.#maxRowId()
    })
    read()
  }

  #loadSince(rowId: number): void {
    const rows = cachedStatement(this.live, WINDOW_SQL.since).raw().all(rowId) as SelectedRow[]
    const fresh: LoggedError[] = []
    for (const row of rows) {
      const [id, at, orgId, method, path, , status, , requestId] = row
      this.#rows.push(this.#toRow(row))
      const bucket = Math.floor(at / HISTORY_BUCKET_MS)
      this.#history.set(bucket, (this.#history.get(bucket) ?? 0) + 1)
      if (isError(status)) fresh.push({ at, status, method, path, requestId, orgId })
      this.#lastRowId = id
    }
    if (fresh.length > 0) {
      this.#errors = [...fresh.reverse(), ...this.#errors].sort((a, b) => b.at - a.at).slice(0, ERRORS_KEPT)
    }
  }

  #toRow([, at, orgId, method, path, route, status, durationMs]: SelectedRow): WindowRow {
    const key = `${method} ${route ?? declaredRoute(method, path) ?? UNMATCHED}`
    let endpoint = this.#endpointKeys.get(key)
    if (endpoint === undefined) {
      endpoint = key
      this.#endpointKeys.set(key, key)
    }
    return { at, orgId, endpoint, status, bin: latencyBin(durationMs) }
  }

  #evict(now: number): void {
    const cutoff = now - WINDOW_MS
    // Rows come roughly in time order (several processes flush a second apart), so trimming the front
    // drops nearly all stale ones; a straggler is skipped when figures are computed.
    let drop = 0
    while (drop < this.#rows.length && (this.#rows[drop] as WindowRow).at <= cutoff) drop++
    if (drop > 0) this.#rows = this.#rows.slice(drop)
    const oldestBucket = Math.floor(now / HISTORY_BUCKET_MS) - HISTORY_BUCKETS
    for (const bucket of this.#history.keys()) if (bucket <= oldestBucket) this.#history.delete(bucket)
    const errorsFrom = now - ERRORS_SINCE_MS
    if (this.#errors.some((error) => error.at <= errorsFrom)) {
      this.#errors = this.#errors.filter((error) => error.at > errorsFrom)
    }
  }

  /** Figures over the window for the organizations `includeOrg` accepts. */
  figures(now: number, includeOrg: (orgId: number | null) => boolean = () => true): WindowFigures {
    return figuresOf(this.#rows, this.#errors, this.#history, now, includeOrg)
  }
}

export const emptyWindowFigures = (now: number): WindowFigures =>
  figuresOf([], [], new Map(), now, () => true)

function figuresOf(
  rows: readonly WindowRow[],
  errors: readonly LoggedError[],
  history: ReadonlyMap<number, number>,
  now: number,
  includeOrg: (orgId: number | null) => boolean,
): WindowFigures {
  const cutoff = now - WINDOW_MS
  const nowFrom = now - NOW_MS
  const byClass: Record<StatusClass, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 }
  const overall = new LatencyHistogram()
  const groups = new Map<string, LatencyHistogram>()
  const endpoints = new Map<string, { histogram: LatencyHistogram; errors: number }>()
  const orgs = new Map<number | null, { requests: number; errors: number; rejected: number }>()
  let recent = 0
  for (const row of rows) {
    if (row.at <= cutoff || !includeOrg(row.orgId)) continue
    if (row.at > nowFrom) recent++
    const kind = statusClass(row.status)
    byClass[kind]++
    overall.add(row.bin)
    let endpoint = endpoints.get(row.endpoint)
    if (!endpoint) {
      endpoint = { histogram: new LatencyHistogram(), errors: 0 }
      endpoints.set(row.endpoint, endpoint)
    }
    endpoint.histogram.add(row.bin)
    let org = orgs.get(row.orgId)
    if (!org) {
      org = { requests: 0, errors: 0, rejected: 0 }
      orgs.set(row.orgId, org)
    }
    org.requests++
    if (isError(row.status)) {
      endpoint.errors++
      org.errors++
    }
    if (row.status === 429) org.rejected++
  }
  const endpointList = [...endpoints].map(([key, { histogram, errors }]) => {
    const space = key.indexOf(' ')
    const route = key.slice(space + 1)
    const group = endpointGroup(route === UNMATCHED ? null : route)
    let groupHistogram = groups.get(group)
    if (!groupHistogram) groups.set(group, (groupHistogram = new LatencyHistogram()))
    groupHistogram.merge(histogram)
    const p95Ms = histogram.percentile(95) as number
    return { method: key.slice(0, space), route, group, requests: histogram.count, errors, p95Ms }
  })
  const overallPercentiles = overall.percentiles()
  const currentBucket = Math.floor(now / HISTORY_BUCKET_MS)
  const bucketSeconds = HISTORY_BUCKET_MS / 1000
  return {
    requests: overall.count,
    perSecondNow: recent / (NOW_MS / 1000),
    byClass,
    latency: overallPercentiles && { requests: overall.count, ...overallPercentiles },
    groups: [...groups]
      .map(([group, histogram]) => ({
        group,
        requests: histogram.count,
        ...(histogram.percentiles() as Percentiles),
      }))
      .sort((a, b) => b.requests - a.requests || a.group.localeCompare(b.group)),
    endpoints: endpointList.sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route)),
    orgs,
    errors: errors.filter((error) => error.at > now - ERRORS_SINCE_MS && includeOrg(error.orgId)),
    history: Array.from(
      { length: HISTORY_BUCKETS },
      (_, index) => (history.get(currentBucket - HISTORY_BUCKETS + 1 + index) ?? 0) / bucketSeconds,
    ),
  }
}

let routes: Routes | undefined

/**
 * The endpoint a request was for when the log has no route: refused before routing (401, 429, 503 from
 * the limit check), it still belongs to the endpoint its path names.
 */
function declaredRoute(method: string, path: string): string | null {
  routes ??= new Routes(allEndpoints())
  const resolution = routes.resolve(method === 'HEAD' ? 'GET' : method, path)
  return resolution.kind === 'endpoint' ? resolution.endpoint.path : null
}

/** A request_log row as `ROW_COLUMNS` select it, read as an array (cheaper than an object per row). */
type SelectedRow = [
  rowId: number,
  at: number,
  orgId: number | null,
  method: string,
  path: string,
  route: string | null,
  status: number,
  durationMs: number,
  requestId: string,
]
