import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { liveDatabasePath } from '../src/db/live.js'
import type { Store } from '../src/db/open.js'
import { openStore } from '../src/app/store.js'
import { RequestLog, type RequestRecord, RETENTION_MS } from '../src/stats/requestLog.js'

let dir: string
let store: Store
let log: RequestLog | undefined
let now: number

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-log-'))
  store = openStore({ db: join(dir, 'svc.db') })
  now = Date.parse('2026-11-21T10:00:30Z')
})

afterEach(async () => {
  await log?.stop()
  log = undefined
  store.close()
  rmSync(dir, { recursive: true, force: true })
})

const record = (requestId: string, at: number, keyId: string | null = 'key_a'): RequestRecord => ({
  requestId,
  at,
  orgId: 1,
  keyId,
  method: 'GET',
  path: '/v1/x',
  route: '/v1/x',
  group: 'x',
  status: 200,
  durationMs: 0.4,
  bytes: 120,
})
const rows = () => store.live.prepare('SELECT count(*) FROM request_log').pluck().get() as number

describe('the request log', () => {
  it('writes batches on its thread and stamps each key with its latest use', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now)
    log.record(record('01a1fec9-0000-7000-8000-000000000001', now - 2000))
    log.record(record('01a1fec9-0000-7000-8000-000000000002', now))
    log.record(record('01a1fec9-0000-7000-8000-000000000003', now - 1000, null))
    await log.flush()
    expect(rows()).toBe(3)
    expect(store.live.prepare('SELECT key_id, last_used_at FROM key_last_used').raw().all()).toEqual([
      ['key_a', new Date(now).toISOString()],
    ])
  })

  it('writes a large buffer in batches, all of it by the time flush resolves', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now, { maxBuffered: 100 })
    for (let i = 0; i < 1234; i++)
      log.record(record(`01a1fec9-0000-7000-8000-${String(i).padStart(12, '0')}`, now))
    await log.flush()
    expect(rows()).toBe(1234)
  })

  it('keeps the records while the live file cannot be written, and writes them once it can', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now, { busyTimeoutMs: 20 })
    const other = new Database(liveDatabasePath(join(dir, 'svc.db')))
    other.exec('BEGIN IMMEDIATE')
    log.record(record('01a1fec9-0000-7000-8000-000000000001', now))
    await log.flush()
    other.exec('ROLLBACK')
    other.close()
    expect(rows()).toBe(0)
    await log.flush()
    expect(rows()).toBe(1)
  })

  it('writes every field as recorded, NULLs and repeated values included, in the order recorded', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now, { maxBuffered: 4 })
    const recorded: RequestRecord[] = [
      record('01a1fec9-0000-7000-8000-000000000001', now - 5),
      {
        ...record('01a1fec9-0000-7000-8000-000000000002', now - 4, null),
        orgId: null,
        route: null,
        group: null,
      },
      { ...record('01a1fec9-0000-7000-8000-000000000003', now - 3, 'key_b'), method: 'POST', status: 429 },
      {
        ...record('01a1fec9-0000-7000-8000-000000000004', now - 2),
        path: '/v1/%C3%A9t%C3%A9',
        durationMs: 12.125,
      },
      { ...record('01a1fec9-0000-7000-8000-000000000005', now - 1), path: '/v1/x', route: null, bytes: 0 },
      { ...record('01a1fec9-0000-7000-8000-000000000006', now, null), orgId: 7, status: 500 },
    ]
    for (const each of recorded) log.record(each)
    await log.flush()
    const written = store.live
      .prepare(
        `SELECT request_id AS requestId, at, org_id AS orgId, key_id AS keyId, method, path, route,
                grp AS "group", status, duration_ms AS durationMs, bytes FROM request_log ORDER BY rowid`,
      )
      .all()
    expect(written).toEqual(recorded)
    expect(
      store.live.prepare('SELECT key_id, last_used_at FROM key_last_used ORDER BY key_id').raw().all(),
    ).toEqual([
      ['key_a', new Date(now - 1).toISOString()],
      ['key_b', new Date(now - 3).toISOString()],
    ])
  })

  it('keeps every batch while the live file is locked, then writes them all in order', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now, {
      maxBuffered: 10,
      busyTimeoutMs: 20,
    })
    const other = new Database(liveDatabasePath(join(dir, 'svc.db')))
    other.exec('BEGIN IMMEDIATE')
    const id = (i: number) => `01a1fec9-0000-7000-8000-${String(i).padStart(12, '0')}`
    for (let i = 0; i < 25; i++) log.record(record(id(i), now))
    await log.flush()
    for (let i = 25; i < 35; i++) log.record(record(id(i), now))
    await log.flush()
    other.exec('ROLLBACK')
    other.close()
    expect(rows()).toBe(0)
    await log.flush()
    expect(store.live.prepare('SELECT request_id FROM request_log ORDER BY rowid').pluck().all()).toEqual(
      Array.from({ length: 35 }, (_, i) => id(i)),
    )
  })

  it('drops the oldest batches past 10,000 records kept while the live file is locked', async () => {
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now, {
      maxBuffered: 100,
      busyTimeoutMs: 20,
    })
    const other = new Database(liveDatabasePath(join(dir, 'svc.db')))
    other.exec('BEGIN IMMEDIATE')
    const id = (i: number) => `01a1fec9-0000-7000-8000-${String(i).padStart(12, '0')}`
    for (let i = 0; i < 10_250; i++) log.record(record(id(i), now))
    await log.flush()
    other.exec('ROLLBACK')
    other.close()
    await log.flush()
    const ids = store.live.prepare('SELECT request_id FROM request_log ORDER BY rowid').pluck().all()
    expect(ids).toEqual(Array.from({ length: 9_950 }, (_, i) => id(i + 300)))
  })

  it('prunes records past 30 days in chunks, and old minute counters and dead leases with them', async () => {
    const old = now - RETENTION_MS - 1
    store.live.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000)
      INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
        SELECT 'old-' || i, ${old} - i, 1, NULL, 'GET', '/', NULL, 200, 1, 1 FROM n;
      INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
        VALUES ('recent', ${now - 1000}, 1, NULL, 'GET', '/', NULL, 200, 1, 1);
      INSERT INTO usage_counters VALUES (1, 'm:${Math.floor(now / 60_000) - 61}', 5), (1, 'm:${Math.floor(now / 60_000)}', 6),
        (1, 'M:2026-10', 7);
      INSERT INTO usage_leases VALUES (1, 'm:${Math.floor(now / 60_000) - 61}', 'dead', 3), (1, 'M:2026-10', 'dead', 3),
        (1, 'M:2026-11', 'dead', 3);
    `)
    log = new RequestLog(liveDatabasePath(join(dir, 'svc.db')), () => now)
    // Chunks of 5,000 in transactions of their own, until one comes back short.
    await log.flush()
    expect(store.live.prepare('SELECT request_id FROM request_log').pluck().all()).toEqual(['recent'])
    expect(store.live.prepare('SELECT period FROM usage_counters ORDER BY period').pluck().all()).toEqual([
      'M:2026-10',
      `m:${Math.floor(now / 60_000)}`,
    ])
    expect(store.live.prepare('SELECT period FROM usage_leases').pluck().all()).toEqual(['M:2026-11'])
  })
})
