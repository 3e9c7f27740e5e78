import { pruneMinuteCounters } from '../accounts/usage.js'
import type { Clock } from '../clock.js'
import type { Db, Store } from '../db/open.js'

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
 * Buffers request records in memory and writes them to the live database (src/db/live.ts) in one
 * transaction per batch, off the request's path. The same flush stamps the last use of the keys seen and
 * prunes records past the retention period.
 */
export class RequestLog {
  #buffer: RequestRecord[] = []
  #timer: NodeJS.Timeout | undefined
  #lastPrune = 0
  readonly #write: (records: RequestRecord[]) => void

  constructor(
    private readonly live: Db,
    private readonly clock: Clock,
    private readonly options: { flushEveryMs?: number; maxBuffered?: number } = {},
  ) {
    const insert = live.prepare(
      `INSERT OR IGNORE INTO request_log
         (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    const touchKey = live.prepare(
      `INSERT INTO key_last_used (key_id, last_used_at) VALUES (?, ?)
       ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`,
    )
    this.#write = live.transaction((records: RequestRecord[]) => {
      const lastUse = new Map<string, number>()
      for (const record of records) {
        // Positional binding: a named one looks up every property by name, for every row.
        insert.run(
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
        )
        if (record.keyId) lastUse.set(record.keyId, Math.max(lastUse.get(record.keyId) ?? 0, record.at))
      }
      for (const [keyId, at] of lastUse) {
        touchKey.run(keyId, new Date(at).toISOString())
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
      pruneRequestLog(this.live, now)
      pruneMinuteCounters(this.live, now)
    } catch {
      // Pruning is housekeeping; the next flush retries.
    }
  }
}

export function pruneRequestLog(live: Db, now: number): number {
  return live.prepare('DELETE FROM request_log WHERE at < ?').run(now - RETENTION_MS).changes
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
