import { usagePruneStatements } from '../accounts/usage.js'
import type { Clock } from '../clock.js'
import type { Store } from '../db/open.js'
import { type RowsOp, type WriteOp, WriterThread } from '../db/writerThread.js'
import { EventLoopWatch } from './eventLoop.js'
import { LiveMinute } from './liveMinute.js'

export interface RequestRecord {
  requestId: string
  at: number
  orgId: number | null
  keyId: string | null
  method: string
  path: string
  route: string | null
  /** The endpoint's group (its declared tag: scheduling, directory, batch, ...) for `svc top`; null: unmatched. */
  group: string | null
  status: number
  durationMs: number
  bytes: number
}

export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000
const PRUNE_EVERY_MS = 60 * 60 * 1000
/** Rows deleted per flush while pruning, so no one transaction holds the live file's lock for long. */
const PRUNE_CHUNK = 5000
/** Records kept in memory while the live file cannot be written; past this the oldest batches are dropped. */
const MAX_KEPT = 10_000

const INSERT = `INSERT OR IGNORE INTO request_log
    (request_id, at, org_id, key_id, method, path, route, grp, status, duration_ms, bytes)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
const TOUCH_KEY = `INSERT INTO key_last_used (key_id, last_used_at) VALUES (?, ?)
  ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`
const PRUNE = `DELETE FROM request_log WHERE rowid IN
  (SELECT rowid FROM request_log WHERE at < ? ORDER BY at LIMIT ${PRUNE_CHUNK})`
const TALLY = `INSERT INTO request_tallies (minute, status, path_class, count) VALUES (?, ?, ?, ?)
  ON CONFLICT (minute, status, path_class) DO UPDATE SET count = count + excluded.count`
const PRUNE_TALLIES = 'DELETE FROM request_tallies WHERE minute < ?'
const HOURS = `INSERT INTO request_hours (hour, org_id, requests, limited, failed) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (hour, org_id) DO UPDATE SET requests = requests + excluded.requests,
    limited = limited + excluded.limited, failed = failed + excluded.failed`
const PRUNE_HOURS = 'DELETE FROM request_hours WHERE hour < ?'
const REPORT = `INSERT INTO server_processes (pid, started_at, seen_at, loop_p99_ms, loop_max_ms, minute_requests,
    minute_failed, minute_latency) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (pid) DO UPDATE SET started_at = excluded.started_at, seen_at = excluded.seen_at,
    loop_p99_ms = excluded.loop_p99_ms, loop_max_ms = excluded.loop_max_ms, minute_requests = excluded.minute_requests,
    minute_failed = excluded.minute_failed, minute_latency = excluded.minute_latency`
const LEAVE = 'DELETE FROM server_processes WHERE pid = ?'
/** Rows kept a minute of the requests that are otherwise only counted: enough to see what they look like. */
export const SAMPLED_A_MINUTE = 60
/** A sampled row's path is cut to this, so that long paths cost no room either. */
const SAMPLED_PATH_BYTES = 256

/** Request records as columns for the writer thread (RowsOp), filled as requests end. */
class RecordColumns {
  count = 0
  readonly #requestIds: string[] = []
  readonly #at: Float64Array
  readonly #orgId: Float64Array
  readonly #status: Float64Array
  readonly #durationMs: Float64Array
  readonly #bytes: Float64Array
  /** 0 for a refused request kept as a sample: it is counted in request_tallies, not in request_hours. */
  readonly #counted: Uint8Array
  // Key, method, path, route and group repeat from request to request: each distinct one is listed once.
  readonly #words: string[] = []
  readonly #codeOf = new Map<string, number>()
  readonly #keyId: Int32Array
  readonly #method: Int32Array
  readonly #path: Int32Array
  readonly #route: Int32Array
  readonly #group: Int32Array

  constructor(readonly capacity: number) {
    this.#at = new Float64Array(capacity)
    this.#orgId = new Float64Array(capacity)
    this.#status = new Float64Array(capacity)
    this.#durationMs = new Float64Array(capacity)
    this.#bytes = new Float64Array(capacity)
    this.#counted = new Uint8Array(capacity)
    this.#keyId = new Int32Array(capacity)
    this.#method = new Int32Array(capacity)
    this.#path = new Int32Array(capacity)
    this.#route = new Int32Array(capacity)
    this.#group = new Int32Array(capacity)
  }

  get full(): boolean {
    return this.count === this.capacity
  }

  add(record: RequestRecord, counted: boolean): void {
    const row = this.count++
    this.#counted[row] = counted ? 1 : 0
    this.#requestIds.push(record.requestId)
    this.#at[row] = record.at
    this.#orgId[row] = record.orgId ?? Number.NaN
    this.#keyId[row] = this.#code(record.keyId)
    this.#method[row] = this.#code(record.method)
    this.#path[row] = this.#code(record.path)
    this.#route[row] = this.#code(record.route)
    this.#group[row] = this.#code(record.group)
    this.#status[row] = record.status
    this.#durationMs[row] = record.durationMs
    this.#bytes[row] = record.bytes
  }

  /** The rows for INSERT's parameters, in its order. */
  rows(statement: number): RowsOp {
    const count = this.count
    const coded = (codes: Int32Array) => ({ words: this.#words, codes: codes.slice(0, count) })
    return {
      statement,
      count,
      columns: [
        this.#requestIds.slice(0, count),
        this.#at.slice(0, count),
        this.#orgId.slice(0, count),
        coded(this.#keyId),
        coded(this.#method),
        coded(this.#path),
        coded(this.#route),
        coded(this.#group),
        this.#status.slice(0, count),
        this.#durationMs.slice(0, count),
        this.#bytes.slice(0, count),
      ],
    }
  }

  /** The batch's requests per clock hour and organization: [hour, org id or 0, requests, 429s, 5xxs]. */
  hours(): [number, number, number, number, number][] {
    const tallies = new Map<string, [number, number, number, number, number]>()
    for (let row = 0; row < this.count; row++) {
      if (this.#counted[row] === 0) continue
      const hour = Math.floor((this.#at[row] as number) / 3_600_000)
      const org = Number.isNaN(this.#orgId[row]) ? 0 : (this.#orgId[row] as number)
      const key = `${hour} ${org}`
      let tally = tallies.get(key)
      if (!tally) tallies.set(key, (tally = [hour, org, 0, 0, 0]))
      const status = this.#status[row] as number
      tally[2]++
      if (status === 429) tally[3]++
      else if (status >= 500) tally[4]++
    }
    return [...tallies.values()]
  }

  /** Each key seen with the time of its latest request. */
  lastUse(): Map<string, number> {
    const latest = new Map<number, number>()
    for (let row = 0; row < this.count; row++) {
      const key = this.#keyId[row] as number
      if (key >= 0) latest.set(key, Math.max(latest.get(key) ?? 0, this.#at[row] as number))
    }
    return new Map([...latest].map(([key, at]) => [this.#words[key] as string, at]))
  }

  #code(text: string | null): number {
    if (text === null) return -1
    let code = this.#codeOf.get(text)
    if (code === undefined) {
      code = this.#words.push(text) - 1
      this.#codeOf.set(text, code)
    }
    return code
  }
}

/**
 * Buffers request records in memory, as columns, and has a writer thread (src/db/writerThread.ts) write
 * them to the live database (src/db/live.ts) in one transaction per batch, off the event loop: writing a
 * row costs a few µs of index upkeep, which the request path does not pay. The same batch stamps the last
 * use of the keys seen and, hourly, prunes records past the retention period (in chunks) and old usage rows.
 */
export class RequestLog {
  /** Full batches and those that could not be written yet, oldest first; then the one being filled. */
  #batches: RecordColumns[] = []
  #filling: RecordColumns | undefined
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<boolean> | undefined
  #lastPrune = 0
  #pruning = false
  /** Refused requests not yet written, by `minute|status|path class`. */
  #tallies = new Map<string, number>()
  #sampledMinute = -1
  #sampled = 0
  /** A report of this process is due (each timed flush), or its row goes (stop). */
  #report: 'due' | 'leave' | undefined
  #loop: EventLoopWatch | undefined
  /** This process's last minute, reported with its event-loop delay (server processes only). */
  #minute: LiveMinute | undefined
  readonly #writer: WriterThread

  constructor(
    livePath: string,
    private readonly clock: Clock,
    private readonly options: {
      flushEveryMs?: number
      maxBuffered?: number
      busyTimeoutMs?: number
      /** Write this process's event-loop delay with each timed flush (server processes: svc top shows it). */
      watchEventLoop?: boolean
    } = {},
  ) {
    this.#writer = new WriterThread(livePath, { busyTimeoutMs: options.busyTimeoutMs })
  }

  start(): void {
    if (this.options.watchEventLoop) {
      this.#loop ??= new EventLoopWatch(this.clock())
      this.#minute ??= new LiveMinute()
    }
    this.#timer ??= setInterval(() => {
      if (this.#loop) this.#report = 'due'
      void this.flush()
    }, this.options.flushEveryMs ?? 1000)
    this.#timer.unref()
  }

  record(record: RequestRecord, counted = true): void {
    if (counted) this.#minute?.add(record.at, record.status, record.durationMs)
    const filling = (this.#filling ??= new RecordColumns(this.options.maxBuffered ?? 500))
    filling.add(record, counted)
    if (filling.full) {
      this.#batches.push(filling)
      this.#filling = undefined
      setImmediate(() => void this.flush())
    }
  }

  /**
   * A request refused before a key or a route was found (401, or a path nothing serves): counted per minute,
   * by status and by the class of its path, and not stored row by row, so that traffic from anyone who can
   * reach the port costs almost no room; the first SAMPLED_A_MINUTE of each minute are kept as rows.
   */
  refused(record: RequestRecord, pathClass: string): void {
    this.#minute?.add(record.at, record.status, record.durationMs)
    const minute = Math.floor(record.at / 60_000)
    const key = `${minute}|${record.status}|${pathClass}`
    this.#tallies.set(key, (this.#tallies.get(key) ?? 0) + 1)
    if (minute !== this.#sampledMinute) {
      this.#sampledMinute = minute
      this.#sampled = 0
    }
    if (this.#sampled++ < SAMPLED_A_MINUTE)
      this.record({ ...record, path: record.path.slice(0, SAMPLED_PATH_BYTES) }, false)
  }

  /**
   * Writes what is buffered, in batches of at most `maxBuffered` rows so that no transaction holds the live
   * file (which lease transactions on the event loop wait for) for long. Resolves once all is written, or
   * kept for the next try when the store cannot be written. Never rejects.
   */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing
    const now = this.clock()
    if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = now
      this.#pruning = true
    }
    let written = true
    while (
      written &&
      (this.#batches.length > 0 ||
        this.#filling ||
        this.#pruning ||
        this.#tallies.size > 0 ||
        this.#report !== undefined)
    ) {
      this.#writing = this.#writeBatch(now)
      try {
        written = await this.#writing
      } finally {
        this.#writing = undefined
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    if (this.#loop) {
      this.#loop.stop()
      this.#loop = undefined
      this.#report = 'leave'
    }
    await this.flush()
    await this.#writer.close()
  }

  /** Writes the oldest buffered rows; false when the store could not be written and they were kept. */
  async #writeBatch(now: number): Promise<boolean> {
    if (this.#batches.length === 0 && this.#filling) {
      this.#batches.push(this.#filling)
      this.#filling = undefined
    }
    const batch = this.#batches[0]
    const sql = [INSERT, TOUCH_KEY, TALLY, HOURS]
    const ops: WriteOp[] = []
    if (batch) {
      for (const [keyId, at] of batch.lastUse()) ops.push([1, [keyId, new Date(at).toISOString()]])
      for (const hour of batch.hours()) ops.push([3, hour])
    }
    const tallies = this.#tallies
    this.#tallies = new Map()
    for (const [key, count] of tallies) {
      const [minute, status, pathClass] = key.split('|')
      ops.push([2, [Number(minute), Number(status), pathClass, count]])
    }
    const report = this.#report
    this.#report = undefined
    if (report === 'due' && this.#loop) {
      const { pid, startedAt, loopP99Ms, loopMaxMs } = this.#loop.report()
      const minute = (this.#minute as LiveMinute).summary(now)
      ops.push([
        sql.push(REPORT) - 1,
        [
          pid,
          startedAt,
          now,
          loopP99Ms,
          loopMaxMs,
          minute.requests,
          minute.failed,
          JSON.stringify(minute.bins),
        ],
      ])
    } else if (report === 'leave') ops.push([sql.push(LEAVE) - 1, [process.pid]])
    const pruneAt = ops.length
    if (this.#pruning) {
      ops.push([sql.push(PRUNE) - 1, [now - RETENTION_MS]])
      ops.push([sql.push(PRUNE_TALLIES) - 1, [Math.floor((now - RETENTION_MS) / 60_000)]])
      ops.push([sql.push(PRUNE_HOURS) - 1, [Math.floor((now - RETENTION_MS) / 3_600_000)]])
      for (const [statement, params] of usagePruneStatements(now)) ops.push([sql.push(statement) - 1, params])
    }
    try {
      const changes = await this.#writer.run({ sql, rows: batch ? [batch.rows(0)] : [], ops })
      if (batch) this.#batches.shift()
      // Pruning goes on, a chunk per batch, until a chunk comes back short.
      if (this.#pruning) this.#pruning = (changes[pruneAt] ?? 0) === PRUNE_CHUNK
      return true
    } catch {
      this.#report ??= report
      // Counted again with whatever came since.
      for (const [key, count] of tallies) this.#tallies.set(key, (this.#tallies.get(key) ?? 0) + count)
      let kept = this.#batches.reduce((sum, kept) => sum + kept.count, this.#filling?.count ?? 0)
      while (kept > MAX_KEPT && this.#batches.length > 0)
        kept -= (this.#batches.shift() as RecordColumns).count
      return false
    }
  }
}

export interface LoggedRequest extends Omit<RequestRecord, 'orgId'> {
  org: string | null
}

/** One logged request by id: the record from the live database, its organization's slug from the main one. */
export function findRequest(store: Pick<Store, 'db' | 'live'>, requestId: string): LoggedRequest | undefined {
  const row = store.live
    .prepare(
      `SELECT request_id AS requestId, at, org_id AS orgId, key_id AS keyId, method, path, route, grp AS "group",
              status, duration_ms AS durationMs, bytes
         FROM request_log WHERE request_id = ?`,
    )
    .get(requestId.toLowerCase()) as RequestRecord | undefined
  if (!row) return undefined
  const { orgId, ...rest } = row
  const org =
    orgId === null
      ? null
      : ((store.db.prepare('SELECT slug FROM organizations WHERE id = ?').pluck().get(orgId) as
          string | undefined) ?? null)
  return { ...rest, org }
}
