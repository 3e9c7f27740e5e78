import { pruneMinuteCounters } from '../accounts/usage.js'
import type { Clock } from '../clock.js'
import type { Db } from '../db/open.js'

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

/**
 * Buffers request records in memory and writes them in one transaction per batch, off the request's path.
 * The same flush stamps `last_used_at` on the keys seen and prunes records past the retention period.
 */
export class RequestLog {
  #buffer: RequestRecord[] = []
  #timer: NodeJS.Timeout | undefined
  #lastPrune = 0
  readonly #write: (records: RequestRecord[]) => void

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: { flushEveryMs?: number; maxBuffered?: number } = {},
  ) {
    const insert = db.prepare(
      `INSERT OR IGNORE INTO request_log
         (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
       VALUES (@requestId, @at, @orgId, @keyId, @method, @path, @route, @status, @durationMs, @bytes)`,
    )
    const touchKey = db.prepare(
      'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
    )
    this.#write = db.transaction((records: RequestRecord[]) => {
      const lastUse = new Map<string, number>()
      for (const record of records) {
        insert.run(record)
        if (record.keyId) lastUse.set(record.keyId, Math.max(lastUse.get(record.keyId) ?? 0, record.at))
      }
      for (const [keyId, at] of lastUse) {
        const iso = new Date(at).toISOString()
        touchKey.run(iso, keyId, iso)
      }
    })
  }

  start(): void {
    this.#timer ??= setInterval(() => this.flush(), this.options.flushEveryMs ?? 1000)
    this.#timer.unref()
  }

  record(record: RequestRecord): void {
    this.#buffer.push(record)
    if (this.#buffer.length >= (this.options.maxBuffered ?? 500)) setImmediate(() => this.flush())
  }

  /** Writes what is buffered. A store that cannot be written keeps the records for the next try. */
  flush(): void {
    if (this.#buffer.length > 0) {
      const batch = this.#buffer
      this.#buffer = []
      try {
        this.#write(batch)
      } catch {
        this.#buffer = batch.concat(this.#buffer).slice(-10_000)
        return
      }
    }
    this.#pruneWhenDue()
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    this.flush()
  }

  #pruneWhenDue(): void {
    const now = this.clock()
    if (now - this.#lastPrune < PRUNE_EVERY_MS) return
    this.#lastPrune = now
    try {
      pruneRequestLog(this.db, now)
      pruneMinuteCounters(this.db, now)
    } catch {
      // Pruning is housekeeping; the next flush retries.
    }
  }
}

export function pruneRequestLog(db: Db, now: number): number {
  return db.prepare('DELETE FROM request_log WHERE at < ?').run(now - RETENTION_MS).changes
}

export interface LoggedRequest extends Omit<RequestRecord, 'orgId'> {
  org: string | null
}

export function findRequest(db: Db, requestId: string): LoggedRequest | undefined {
  return db
    .prepare(
      `SELECT r.request_id AS requestId, r.at, o.slug AS org, r.key_id AS keyId, r.method, r.path, r.route,
              r.status, r.duration_ms AS durationMs, r.bytes
         FROM request_log r LEFT JOIN organizations o ON o.id = r.org_id WHERE r.request_id = ?`,
    )
    .get(requestId.toLowerCase()) as LoggedRequest | undefined
}
