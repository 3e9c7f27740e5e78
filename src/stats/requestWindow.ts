import type { Db } from '../db/open.js'
import { LatencyHistogram, latencyBin, type Percentiles } from './histogram.js'
import {
  type Cell,
  type Endpoint,
  SlidingTotals,
  STATUS_CLASSES,
  type StatusClass,
  statusClassIndex,
} from './slidingTotals.js'

export type { StatusClass } from './slidingTotals.js'

export interface LoggedError {
  at: number
  status: number
  method: string
  path: string
  requestId: string
  orgId: number | null
}

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

/** The route shown for requests no declared endpoint matched, and their group. */
export const UNMATCHED = '(unmatched)'
const UNMATCHED_GROUP = 'unmatched'

/**
 * A request as the window counts it. Reading a value from SQLite costs about as much as the rest of the
 * row's work, so a row is five values: method, group and route come as one string, and the path and
 * request id are read only for the few rows that need them (ERROR_COLUMNS). The server logs each request's
 * endpoint and group, those refused before routing included, so nothing here resolves a route.
 */
const COUNTED_COLUMNS = `at, org_id, status, duration_ms,
  method || ' ' || coalesce(grp, '${UNMATCHED_GROUP}') || ' ' || coalesce(route, '${UNMATCHED}')`
const ERROR_COLUMNS = 'at, status, method, path, request_id AS requestId, org_id AS orgId'
/** New rows: after the last one read, up to the last one when the refresh began, and recent enough. */
const NEW_ROWS = 'FROM request_log WHERE rowid > ? AND rowid <= ? AND +at > ?'

/** Every query `svc top` runs on the request log; each reads through an index (test/top.test.tsx proves it). */
export const WINDOW_SQL = {
  lastRowId: 'SELECT max(rowid) AS id FROM request_log',
  // Index-only, as the two below: the history needs counts, the window its first row.
  history: `SELECT at / ${HISTORY_BUCKET_MS} AS bucket, count(*) AS n FROM request_log WHERE at > ? GROUP BY bucket`,
  firstRowId: 'SELECT min(rowid) AS id FROM request_log INDEXED BY request_log_at WHERE at > ?',
  errors: `SELECT ${ERROR_COLUMNS}
             FROM (SELECT rowid AS rowId, * FROM request_log WHERE at > ?
                    ORDER BY at DESC, rowid DESC LIMIT ${ERROR_SCAN_LIMIT})
            WHERE status >= 400 ORDER BY at DESC, rowId DESC LIMIT ${ERRORS_KEPT}`,
  // Rows are stored in about the order of `at`, so the window is one run along the table from its first
  // row, as is what was added since the last refresh; `+at` keeps SQLite from going through the `at` index
  // instead, twice as slow.
  counted: `SELECT ${COUNTED_COLUMNS} ${NEW_ROWS} ORDER BY rowid`,
  newErrors: `SELECT ${ERROR_COLUMNS} ${NEW_ROWS} AND status >= 400 ORDER BY rowid`,
}

/**
 * The recent part of the request log, read incrementally: the first refresh reads the window; every later
 * one reads only rows added since (by rowid, which SQLite hands out in commit order for this table). Rows
 * are summed as they are read (src/stats/slidingTotals.ts) and not kept as rows, so a refresh costs what
 * the server wrote since the last one, whatever the window holds.
 */
export class RequestWindow {
  #totals = new SlidingTotals(WINDOW_MS, NOW_MS)
  #errors: LoggedError[] = []
  #history = new Map<number, number>()
  #lastRowId = -1
  /** By `GET /v1/scheduling/slots`, as COUNTED_COLUMNS reads them. */
  readonly #endpoints = new Map<string, Endpoint>()

  /** `rowsPerRead`: rowids read per query (50,000); tests make it small to cross many slices. */
  constructor(
    private readonly live: Db,
    private readonly options: { rowsPerRead?: number } = {},
  ) {}

  refresh(now: number): void {
    // One read transaction: the queries below see the same rows.
    this.live.transaction(() => {
      const maxRowId = this.#maxRowId()
      // Rowids only go back when the table was emptied (pruned to nothing, or the file replaced): start again.
      if (maxRowId < this.#lastRowId) this.#reset()
      // Moved first: rows read next are counted against the window as it now stands.
      this.#totals.advance(now)
      if (this.#lastRowId < 0) this.#loadRecent(now, maxRowId)
      else if (maxRowId > this.#lastRowId) this.#loadSince(now, maxRowId)
      this.#lastRowId = maxRowId
    })()
    this.#evict(now)
  }

  #maxRowId(): number {
    const row = this.live.statement(WINDOW_SQL.lastRowId).get() as { id: number | null }
    return row.id ?? 0
  }

  #reset(): void {
    this.#totals = new SlidingTotals(WINDOW_MS, NOW_MS)
    this.#errors = []
    this.#history.clear()
    this.#lastRowId = -1
  }

  #loadRecent(now: number, maxRowId: number): void {
    const from = Math.min(now - WINDOW_MS, now - HISTORY_BUCKETS * HISTORY_BUCKET_MS)
    const buckets = this.live.prepare(WINDOW_SQL.history).all(from) as { bucket: number; n: number }[]
    for (const { bucket, n } of buckets) this.#history.set(Math.floor(bucket), n)
    const first = this.live.prepare(WINDOW_SQL.firstRowId).get(now - WINDOW_MS) as { id: number | null }
    if (first.id !== null) this.#count(first.id - 1, maxRowId, now - WINDOW_MS, false)
    this.#errors = this.live.prepare(WINDOW_SQL.errors).all(now - ERRORS_SINCE_MS) as LoggedError[]
  }

  #loadSince(now: number, maxRowId: number): void {
    // Rows older than the history are of no use: not in the window, and their bucket is gone.
    this.#count(this.#lastRowId, maxRowId, now - HISTORY_BUCKETS * HISTORY_BUCKET_MS, true)
    const fresh = this.live
      .statement(WINDOW_SQL.newErrors)
      .all(this.#lastRowId, maxRowId, now - ERRORS_SINCE_MS) as LoggedError[]
    if (fresh.length > 0) {
      this.#errors = [...fresh.reverse(), ...this.#errors].sort((a, b) => b.at - a.at).slice(0, ERRORS_KEPT)
    }
  }

  /**
   * Counts the rows after `afterRowId` up to `lastRowId` from `since` on in the window, and in the history
   * if asked. Read a slice of rowids at a time: the first read of a busy window is millions of rows, which
   * would otherwise all be held at once.
   */
  #count(afterRowId: number, lastRowId: number, since: number, history: boolean): void {
    const slice = this.options.rowsPerRead ?? 50_000
    for (let after = afterRowId; after < lastRowId; after += slice) {
      this.#countSlice([after, Math.min(lastRowId, after + slice), since], history)
    }
  }

  #countSlice(range: [afterRowId: number, lastRowId: number, since: number], history: boolean): void {
    const rows = this.live
      .statement(WINDOW_SQL.counted)
      .raw()
      .all(...range) as CountedRow[]
    for (const [at, orgId, status, durationMs, key] of rows) {
      const endpoint = this.#endpoint(key)
      this.#totals.add(at, orgId, endpoint, latencyBin(durationMs), statusClassIndex(status))
      if (history) {
        const bucket = Math.floor(at / HISTORY_BUCKET_MS)
        this.#history.set(bucket, (this.#history.get(bucket) ?? 0) + 1)
      }
    }
  }

  /** `GET scheduling /v1/scheduling/slots` as one endpoint, made once. */
  #endpoint(key: string): Endpoint {
    let endpoint = this.#endpoints.get(key)
    if (!endpoint) {
      const [method = '', group = '', route = ''] = key.split(' ')
      endpoint = { method, route, group }
      this.#endpoints.set(key, endpoint)
    }
    return endpoint
  }

  #evict(now: number): void {
    const oldestBucket = Math.floor(now / HISTORY_BUCKET_MS) - HISTORY_BUCKETS
    for (const bucket of this.#history.keys()) if (bucket <= oldestBucket) this.#history.delete(bucket)
    const errorsFrom = now - ERRORS_SINCE_MS
    if (this.#errors.some((error) => error.at <= errorsFrom)) {
      this.#errors = this.#errors.filter((error) => error.at > errorsFrom)
    }
  }

  /** Figures over the window as of the last refresh, for the organizations `includeOrg` accepts. */
  figures(now: number, includeOrg: (orgId: number | null) => boolean = () => true): WindowFigures {
    return figuresOf(this.#totals.cells(), this.#errors, this.#history, now, includeOrg)
  }
}

export const emptyWindowFigures = (now: number): WindowFigures =>
  figuresOf([], [], new Map(), now, () => true)

/** Sums the cells of the included organizations; each cell's histogram merges into its endpoint's. */
function figuresOf(
  cells: Iterable<Cell>,
  errors: readonly LoggedError[],
  history: ReadonlyMap<number, number>,
  now: number,
  includeOrg: (orgId: number | null) => boolean,
): WindowFigures {
  const byClass = STATUS_CLASSES.map(() => 0)
  const overall = new LatencyHistogram()
  const groups = new Map<string, LatencyHistogram>()
  const endpoints = new Map<Endpoint, { histogram: LatencyHistogram; errors: number }>()
  const orgs = new Map<number | null, { requests: number; errors: number; rejected: number }>()
  let recent = 0
  for (const cell of cells) {
    if (!includeOrg(cell.orgId)) continue
    recent += cell.recent
    cell.byClass.forEach((count, index) => {
      byClass[index] = (byClass[index] as number) + count
    })
    const errorCount = cell.histogram.count - (cell.byClass[0] as number) - (cell.byClass[1] as number)
    let endpoint = endpoints.get(cell.endpoint)
    if (!endpoint) endpoints.set(cell.endpoint, (endpoint = { histogram: new LatencyHistogram(), errors: 0 }))
    endpoint.histogram.merge(cell.histogram)
    endpoint.errors += errorCount
    let org = orgs.get(cell.orgId)
    if (!org) orgs.set(cell.orgId, (org = { requests: 0, errors: 0, rejected: 0 }))
    org.requests += cell.histogram.count
    org.errors += errorCount
    org.rejected += cell.byClass[3] as number
  }
  const endpointList = [...endpoints].map(([{ method, route, group }, { histogram, errors }]) => {
    let groupHistogram = groups.get(group)
    if (!groupHistogram) groups.set(group, (groupHistogram = new LatencyHistogram()))
    groupHistogram.merge(histogram)
    overall.merge(histogram)
    const p95Ms = histogram.percentile(95) as number
    return { method, route, group, requests: histogram.count, errors, p95Ms }
  })
  const overallPercentiles = overall.percentiles()
  const currentBucket = Math.floor(now / HISTORY_BUCKET_MS)
  const bucketSeconds = HISTORY_BUCKET_MS / 1000
  return {
    requests: overall.count,
    perSecondNow: recent / (NOW_MS / 1000),
    byClass: Object.fromEntries(STATUS_CLASSES.map((name, index) => [name, byClass[index]])) as Record<
      StatusClass,
      number
    >,
    latency: overallPercentiles && { requests: overall.count, ...overallPercentiles },
    groups: [...groups]
      .map(([group, histogram]) => ({
        group,
        requests: histogram.count,
        ...(histogram.percentiles() as Percentiles),
      }))
      .sort((a, b) => b.requests - a.requests || a.group.localeCompare(b.group)),
    endpoints: endpointList.sort(
      (a, b) => b.requests - a.requests || a.route.localeCompare(b.route) || a.method.localeCompare(b.method),
    ),
    orgs,
    errors: errors.filter((error) => error.at > now - ERRORS_SINCE_MS && includeOrg(error.orgId)),
    history: Array.from(
      { length: HISTORY_BUCKETS },
      (_, index) => (history.get(currentBucket - HISTORY_BUCKETS + 1 + index) ?? 0) / bucketSeconds,
    ),
  }
}

/** A request_log row as COUNTED_COLUMNS select it, read as an array (cheaper than an object per row). */
type CountedRow = [
  at: number,
  orgId: number | null,
  status: number,
  durationMs: number,
  /** `GET scheduling /v1/scheduling/slots`. */
  endpoint: string,
]
