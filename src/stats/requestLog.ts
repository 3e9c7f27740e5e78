import { usagePruneStatements } from '../accounts/usage.js'
import type { Clock } from '../clock.js'
import type { Store } from '../db/open.js'
import { type WriteOp, WriterThread } from '../db/writerThread.js'

export interface RequestRecord {
  requestId: string
  at: number
  orgId: number | null
  keyId: string | null
  method: string
  path: string
  route: string | null
  status: number
  durationMs: number
  bytes: number
}

export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000
const PRUNE_EVERY_MS = 60 * 60 * 1000
/** Rows deleted per flush while pruning, so no one transaction holds the live file's lock for long. */
const PRUNE_CHUNK = 5000
/** Records kept in memory while the live file cannot be written; past this the oldest are dropped. */
const MAX_KEPT = 10_000

const INSERT = `INSERT OR IGNORE INTO request_log
    (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
const TOUCH_KEY = `INSERT INTO key_last_used (key_id, last_used_at) VALUES (?, ?)
  ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`
const PRUNE = `DELETE FROM request_log WHERE rowid IN
  (SELECT rowid FROM request_log WHERE at < ? ORDER BY at LIMIT ${PRUNE_CHUNK})`

/**
 * Buffers request records in memory and has a writer thread (src/db/writerThread.ts) write them to the live
 * database (src/db/live.ts) in one transaction per batch, off the event loop: writing a row costs a few
 * µs of index upkeep, which the request path does not pay. The same batch stamps the last use of the keys
 * seen and, hourly, prunes records past the retention period (in chunks) and old usage rows.
 */
export class RequestLog {
  #buffer: RequestRecord[] = []
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<boolean> | undefined
  #lastPrune = 0
  #pruning = false
  readonly #writer: WriterThread

  constructor(
    livePath: string,
    private readonly clock: Clock,
    private readonly options: { flushEveryMs?: number; maxBuffered?: number; busyTimeoutMs?: number } = {},
  ) {
    this.#writer = new WriterThread(livePath, { busyTimeoutMs: options.busyTimeoutMs })
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.options.flushEveryMs ?? 1000)
    this.#timer.unref()
  }

  record(record: RequestRecord): void {
    this.#buffer.push(record)
    if (this.#buffer.length === (this.options.maxBuffered ?? 500)) setImmediate(() => void this.flush())
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
    while (written && (this.#buffer.length > 0 || this.#pruning)) {
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
    await this.flush()
    await this.#writer.close()
  }

  /** Writes the oldest buffered rows; false when the store could not be written and they were kept. */
  async #writeBatch(now: number): Promise<boolean> {
    const batch = this.#buffer.splice(0, this.options.maxBuffered ?? 500)
    const sql = [INSERT, TOUCH_KEY]
    const ops: WriteOp[] = []
    const lastUse = new Map<string, number>()
    for (const record of batch) {
      ops.push([
        0,
        [
          record.requestId,
          record.at,
          record.orgId,
          record.keyId,
          record.method,
          record.path,
          record.route,
          record.status,
          record.durationMs,
          record.bytes,
        ],
      ])
      if (record.keyId) lastUse.set(record.keyId, Math.max(lastUse.get(record.keyId) ?? 0, record.at))
    }
    for (const [keyId, at] of lastUse) ops.push([1, [keyId, new Date(at).toISOString()]])
    const pruneAt = ops.length
    if (this.#pruning) {
      ops.push([sql.push(PRUNE) - 1, [now - RETENTION_MS]])
      for (const [statement, params] of usagePruneStatements(now)) ops.push([sql.push(statement) - 1, params])
    }
    try {
      const changes = await this.#writer.run({ sql, ops })
      // Pruning goes on, a chunk per batch, until a chunk comes back short.
      if (this.#pruning) this.#pruning = (changes[pruneAt] ?? 0) === PRUNE_CHUNK
      return true
    } catch {
      this.#buffer = batch.concat(this.#buffer).slice(-MAX_KEPT)
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
      `SELECT request_id AS requestId, at, org_id AS orgId, key_id AS keyId, method, path, route,
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
