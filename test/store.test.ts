import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { migrate, schemaVersion } from '../src/db/migrate.js'
import { MIGRATIONS } from '../src/db/migrations.js'
import { openDatabase } from '../src/db/open.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const dirs: string[] = []
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-'))
  dirs.push(dir)
  return join(dir, 'svc.db')
}
let t: TestServer | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const latest = Math.max(...MIGRATIONS.map((migration) => migration.version))

describe('migrations', () => {
  it('apply on open, in WAL mode, and are idempotent', () => {
    const path = tempDb()
    const db = openDatabase(path)
    expect(schemaVersion(db)).toBe(latest)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(migrate(db)).toBe(0)
    db.close()
    const again = openDatabase(path)
    expect(schemaVersion(again)).toBe(latest)
    again.close()
  })

  it('upgrade a database made by an older version in place, keeping its data', () => {
    const path = tempDb()
    const old = new Database(path)
    migrate(
      old,
      MIGRATIONS.filter((migration) => migration.version === 1),
    )
    old
      .prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('kept', 'Kept', '2026-01-01')")
      .run()
    expect(schemaVersion(old)).toBe(1)
    old.close()
    const db = openDatabase(path)
    expect(schemaVersion(db)).toBe(latest)
    expect(db.prepare('SELECT slug FROM organizations').pluck().all()).toEqual(['kept'])
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'request_log'").pluck().get()).toBe(
      'request_log',
    )
    db.close()
  })

  it('are applied once when two connections open a fresh file together', () => {
    const path = tempDb()
    const a = openDatabase(path)
    const b = openDatabase(path)
    expect(schemaVersion(a)).toBe(latest)
    expect(schemaVersion(b)).toBe(latest)
    expect(a.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(3)
    a.close()
    b.close()
  })
})

describe('an unavailable store', () => {
  it('answers 503 with Retry-After (transient on the FHIR base) while another process holds the write lock', async () => {
    t = await startTestServer({ busyTimeoutMs: 50 })
    const other = new Database(t.dbPath)
    other.pragma('busy_timeout = 1000')
    other.exec('BEGIN IMMEDIATE')
    try {
      const problem = await t.get('/v1/scheduling/publishers', bearer(t.key))
      expect(problem.status).toBe(503)
      expect(problem.headers['retry-after']).toMatch(/^\d+$/)
      expect(problem.json).toMatchObject({ type: expect.stringMatching(/#unavailable$/), status: 503 })
      const outcome = await t.get('/v1/fhir/r4/metadata', bearer(t.key))
      expect(outcome.status).toBe(503)
      expect(outcome.json.issue[0].code).toBe('transient')
      expect(outcome.headers['retry-after']).toMatch(/^\d+$/)
      // An answer saying the store could not be read is never cached, metadata included.
      const terminology = await t.get('/v1/fhir/r4/metadata?mode=terminology', bearer(t.key))
      expect(terminology.status).toBe(503)
      expect(terminology.headers['cache-control']).toBe('no-store')
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect((await t.get('/v1/scheduling/publishers', bearer(t.key))).status).toBe(200)
  })
})

describe('secrets', () => {
  it('never reach the database file, its WAL or the request log', async () => {
    const server = await startTestServer()
    for (let i = 0; i < 3; i++) await server.get('/v1/scheduling/publishers', bearer(server.key))
    await server.get('/v1/scheduling/publishers?api_key=x', { 'x-api-key': server.key })
    // Closing drains connections and flushes the buffered request log.
    await server.server.close()
    const db = new Database(server.dbPath, { readonly: true })
    expect(db.prepare('SELECT count(*) FROM request_log').pluck().get()).toBe(4)
    db.close()
    const body = server.key.slice('svc_sk_'.length)
    for (const file of [server.dbPath, `${server.dbPath}-wal`].filter((path) => existsSync(path))) {
      expect(readFileSync(file).toString('latin1').includes(body)).toBe(false)
    }
    rmSync(server.dir, { recursive: true, force: true })
  })
})
