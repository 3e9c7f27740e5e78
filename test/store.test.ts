import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createKey, listKeys } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { liveDatabasePath } from '../src/db/live.js'
import { openLiveStore } from '../src/app/store.js'
import { appliedSteps, migrate, NewerStoreError, type Step } from '../src/db/migrate.js'
import { openDatabase, openStore, STORE_SCHEMA } from '../src/app/store.js'
import { findRequest } from '../src/stats/requestLog.js'
import { runCli } from './support/cli.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { allSteps, stepsThrough, writeNumberedFile } from './support/legacyStore.js'

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

/** Every step of the file recorded, whatever order they ran in. */
const upToDate = (db: Database.Database, file: 'main' | 'live') =>
  expect([...appliedSteps(db)].sort()).toEqual([...allSteps(file)].sort())
const tableNames = (db: Database.Database) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()

describe('migrations', () => {
  it('apply on open to both files, in WAL mode, and are idempotent', () => {
    const path = tempDb()
    const store = openStore({ db: path })
    upToDate(store.db, 'main')
    upToDate(store.live, 'live')
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(store.live.pragma('journal_mode', { simple: true })).toBe('wal')
    // Large pages for the main file's bulk JSON, SQLite's default for the live file's small rows.
    expect(store.db.pragma('page_size', { simple: true })).toBe(16_384)
    expect(store.live.pragma('page_size', { simple: true })).toBe(4096)
    expect(migrate(store.db, STORE_SCHEMA.main)).toBe(0)
    expect(migrate(store.live, STORE_SCHEMA.live)).toBe(0)
    // What each request writes lives only in the live file.
    expect(tableNames(store.db)).not.toContain('usage_counters')
    expect(tableNames(store.db)).not.toContain('request_log')
    expect(tableNames(store.live)).toEqual([
      'key_last_used',
      'operator_sessions',
      'request_hours',
      'request_log',
      'request_tallies',
      'schema_steps',
      'server_processes',
      'signin_failures',
      'usage_counters',
      'usage_leases',
    ])
    store.close()
    const again = openStore({ db: path })
    upToDate(again.db, 'main')
    upToDate(again.live, 'live')
    again.close()
  })

  it('are recorded by domain and name, so that no two can collide', () => {
    for (const file of ['main', 'live'] as const) {
      const names = allSteps(file)
      expect(new Set(names).size).toBe(names.length)
      for (const name of names) expect(name).toMatch(/^[a-z]+\/[a-z0-9-]+$/)
    }
  })

  it('run a step added below steps a file already has, once', () => {
    const path = tempDb()
    const added = STORE_SCHEMA.main.find((step) => step.id === 'scheduling/part-counter') as Step
    const before = new Database(path)
    // A file with every step before and after it (the live file's moves are made on open).
    migrate(
      before,
      STORE_SCHEMA.main.filter((step) => step !== added && !step.attachLive),
    )
    expect(tableNames(before)).not.toContain('sched_part_counter')
    before.close()
    const store = openStore({ db: path })
    expect(tableNames(store.db)).toContain('sched_part_counter')
    upToDate(store.db, 'main')
    expect(migrate(store.db, STORE_SCHEMA.main)).toBe(0)
    store.close()
  })

  it('adopt a file numbered by user_version: its steps recorded, a step whose probe finds it missing run once', () => {
    const path = tempDb()
    const old = new Database(path)
    const late = STORE_SCHEMA.main.find((step) => step.legacyMissing !== undefined)
    expect(late).toBeDefined()
    // A file made before that step existed, when the directory's step 20 was the last one shipped.
    writeNumberedFile(
      old,
      stepsThrough(20, (step) => step !== late),
      31,
    )
    expect(
      old
        .prepare(late?.legacyMissing ?? '')
        .pluck()
        .get(),
    ).toBe(1)
    old.close()
    const store = openStore({ db: path })
    expect(
      store.db
        .prepare(late?.legacyMissing ?? '')
        .pluck()
        .get(),
    ).toBe(0)
    upToDate(store.db, 'main')
    expect(migrate(store.db, STORE_SCHEMA.main)).toBe(0)
    store.close()
  })

  it('name the live file after the main one', () => {
    expect(liveDatabasePath('/var/lib/svc/svc.db')).toBe('/var/lib/svc/svc.live.db')
    expect(liveDatabasePath('data/store.sqlite3')).toBe('data/store.live.sqlite3')
    expect(liveDatabasePath('/srv/store')).toBe('/srv/store.live')
    expect(liveDatabasePath('/srv/v1.0/store')).toBe('/srv/v1.0/store.live')
  })

  it('upgrade a database made by an older version in place, keeping its data', () => {
    const path = tempDb()
    const old = new Database(path)
    writeNumberedFile(old, stepsThrough(1), 1)
    old
      .prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('kept', 'Kept', '2026-01-01')")
      .run()
    old.close()
    const db = openDatabase(path)
    upToDate(db, 'main')
    expect(db.prepare('SELECT slug FROM organizations').pluck().all()).toEqual(['kept'])
    expect(tableNames(db)).toContain('publishers')
    db.close()
    const live = openLiveStore({ db: path }, { readonly: true })
    expect(tableNames(live)).toContain('request_log')
    live.close()
  })

  it('refuse a file a newer version wrote, main or live, naming the steps it does not know', () => {
    for (const file of ['main', 'live'] as const) {
      const path = tempDb()
      const store = openStore({ db: path })
      const later = ['plans/a-later-step', 'scheduling/another', 'medlist/third', 'accounts/fourth']
      const insert = store[file === 'main' ? 'db' : 'live'].prepare(
        "INSERT INTO schema_steps (id, applied_at) VALUES (?, 'later')",
      )
      for (const id of later) insert.run(id)
      store.close()
      expect(() => openStore({ db: path })).toThrow(NewerStoreError)
      expect(() => openStore({ db: path })).toThrow(
        /was written by a newer version of svc: it records schema steps this version does not know \(plans\/a-later-step, scheduling\/another, medlist\/third and 1 more\)/,
      )
    }
  })

  it('are applied once when two connections open a fresh file together', () => {
    const path = tempDb()
    const a = openStore({ db: path })
    const b = openStore({ db: path })
    upToDate(a.db, 'main')
    upToDate(b.live, 'live')
    expect(a.db.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(3)
    a.close()
    b.close()
  })

  it('wait for the live file as long as the caller said, also while the main file moves tables into it', async () => {
    const path = tempDb()
    // Another process writing to a live file this store has not set up yet.
    const other = await holdWriteLock(liveDatabasePath(path))
    try {
      const started = performance.now()
      expect(() => openStore({ db: path }, { busyTimeoutMs: 100 })).toThrow(/locked/)
      // SQLite's default (5 s) was used for the live file the main file's steps open.
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await other.release()
    }
    const store = openStore({ db: path }, { busyTimeoutMs: 100 })
    upToDate(store.live, 'live')
    store.close()
  })
})

describe('a database made before the live file existed', () => {
  /** The schema the previous version shipped: counters, request log and last use in the main file. */
  function previousVersionDb(path: string) {
    const old = new Database(path)
    old.pragma('journal_mode = WAL')
    // The steps numbered below the first one that moves tables into the live file: what had shipped then.
    const firstLiveStep = Math.min(
      ...STORE_SCHEMA.main.filter((step) => step.attachLive).map((step) => step.legacyVersion as number),
    )
    writeNumberedFile(old, stepsThrough(firstLiveStep - 1), firstLiveStep - 1)
    old.exec(`
      INSERT INTO organizations (id, slug, name, created_at) VALUES (7, 'kept', 'Kept', '2026-01-01');
      INSERT INTO api_keys (id, org_id, display_prefix, secret_sha256, created_at, last_used_at)
        VALUES ('key_a', 7, 'svc_sk_ab', x'01', '2026-01-01', '2026-11-21T09:59:00.000Z'),
               ('key_b', 7, 'svc_sk_cd', x'02', '2026-01-01', NULL);
      INSERT INTO usage_counters VALUES (7, 'M:2026-11', 812), (7, 'm:29893799', 41);
      INSERT INTO request_log VALUES
        ('0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a11', 1795255140000, 7, 'key_a', 'GET', '/v1/x', '/v1/x', 200, 1.5, 120),
        ('0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a12', 1795255141000, NULL, NULL, 'GET', '/v1/x', NULL, 401, 0.2, 300);
    `)
    return old
  }

  function expectMoved(path: string) {
    const store = openStore({ db: path })
    try {
      upToDate(store.db, 'main')
      expect(tableNames(store.db)).not.toContain('usage_counters')
      expect(tableNames(store.db)).not.toContain('request_log')
      expect(
        store.live.prepare('SELECT org_id, period, count FROM usage_counters ORDER BY period').raw().all(),
      ).toEqual([
        [7, 'M:2026-11', 812],
        [7, 'm:29893799', 41],
      ])
      expect(store.live.prepare('SELECT count(*) FROM request_log').pluck().get()).toBe(2)
      expect(findRequest(store, '0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a11')).toMatchObject({
        org: 'kept',
        keyId: 'key_a',
        status: 200,
        bytes: 120,
      })
      expect(listKeys(store).map((key) => [key.id, key.lastUsedAt])).toEqual([
        ['key_a', '2026-11-21T09:59:00.000Z'],
        ['key_b', null],
      ])
    } finally {
      store.close()
    }
  }

  it('moves counters, log rows and last use into the live file in place', () => {
    const path = tempDb()
    previousVersionDb(path).close()
    expectMoved(path)
  })

  it('moves them once when a move cut between the two files is repeated', () => {
    // In WAL mode a commit across two files is atomic per file only: simulate the live file committed and
    // the main one not, then open again. Counters must not be added twice, nor rows copied twice.
    const path = tempDb()
    const old = previousVersionDb(path)
    old.close()
    const live = openLiveStore({ db: path })
    live.exec(`
      INSERT INTO usage_counters VALUES (7, 'M:2026-11', 812), (7, 'm:29893799', 41);
      INSERT INTO key_last_used VALUES ('key_a', '2026-11-21T09:59:00.000Z');
      INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
        VALUES ('0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a11', 1795255140000, 7, 'key_a', 'GET', '/v1/x', '/v1/x', 200, 1.5, 120);
    `)
    live.close()
    expectMoved(path)
  })
})

/**
 * Another process holding a file's write lock (taken on an empty file when there is none yet), after running
 * `work` in its transaction.
 */
async function holdWriteLock(path: string, work = '') {
  const script = `
    const Database = require('better-sqlite3')
    const db = new Database(process.argv[1])
    db.pragma('journal_mode = WAL')
    db.exec('BEGIN IMMEDIATE')
    db.exec(process.argv[2])
    process.stdout.write('locked\\n')
    process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0) })
  `
  const child = spawn(process.execPath, ['-e', script, path, work], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  await once(child.stdout, 'data')
  return {
    async release() {
      child.stdin.write('\\n')
      await once(child, 'exit')
    },
  }
}

/** Another process holding the main file's write lock, as an import's long transaction does. */
const holdMainWriteLock = (path: string) =>
  holdWriteLock(
    path,
    `CREATE TABLE import_staging (n INTEGER);
     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 100000)
     INSERT INTO import_staging SELECT n FROM s;`,
  )

describe('a long write on the main file', () => {
  it('does not hold up or fail keyed requests: their writes go to the live file', async () => {
    t = await startTestServer({ busyTimeoutMs: 5000 })
    const importer = await holdMainWriteLock(t.dbPath)
    try {
      const probe = new Database(t.dbPath)
      probe.pragma('busy_timeout = 0')
      expect(() => probe.exec('BEGIN IMMEDIATE')).toThrow(/locked/)
      probe.close()
      const ids: string[] = []
      for (let i = 0; i < 20; i++) {
        const started = performance.now()
        const response = await t.get('/v1/scheduling/publishers', bearer(t.key))
        expect(response.status).toBe(200)
        // Waiting on the lock would take the 5 s busy timeout, then answer 503.
        expect(performance.now() - started).toBeLessThan(1000)
        ids.push(response.headers['x-request-id'] as string)
      }
      // Counted, logged and stamped while the lock is still held; readable as `svc top` reads them.
      await t.server.flush()
      const reader = openLiveStore({ db: t.dbPath }, { readonly: true })
      try {
        await vi.waitFor(
          () => expect(reader.prepare('SELECT count(*) FROM request_log').pluck().get()).toBe(20),
          { timeout: 5000, interval: 20 },
        )
        expect(
          reader.prepare("SELECT count FROM usage_counters WHERE period = 'M:2026-11'").pluck().get(),
        ).toBe(20)
        expect(reader.prepare('SELECT count(*) FROM key_last_used').pluck().get()).toBe(1)
      } finally {
        reader.close()
      }
      expect(findRequest(t.server, ids[19] as string)).toMatchObject({ org: 'acme', status: 200 })
    } finally {
      await importer.release()
    }
  })
})

describe('a locked live file', () => {
  it('holds up only the requests that must take a lease, not the event loop', async () => {
    t = await startTestServer({ busyTimeoutMs: 5000, plan: 'scale' })
    // acme now holds a lease of (3,000 - 0) / 16 = 187 units: its next requests need no write.
    expect((await t.get('/v1/scheduling/publishers', bearer(t.key))).status).toBe(200)
    createOrganization(t.server.db, { slug: 'beta' })
    const beta = createKey(t.server.db, { org: 'beta' }).key
    const other = new Database(liveDatabasePath(t.dbPath))
    other.exec('BEGIN IMMEDIATE')
    let waiting: Promise<{ status: number }> | undefined
    try {
      waiting = t.get('/v1/scheduling/publishers', bearer(beta))
      const started = performance.now()
      for (let i = 0; i < 5; i++) {
        expect((await t.get('/v1/scheduling/publishers', bearer(t.key))).status).toBe(200)
      }
      // SQLite's busy handler would have stopped the event loop for as long as the lock is held.
      expect(performance.now() - started).toBeLessThan(1000)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect((await waiting)?.status).toBe(200)
  })
})

describe('an unavailable store', () => {
  it('answers 503 with Retry-After (transient on the FHIR base) while another process holds the live write lock', async () => {
    t = await startTestServer({ busyTimeoutMs: 50 })
    const other = new Database(liveDatabasePath(t.dbPath))
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

describe('the operator log of a store that cannot be used', () => {
  it('says why in a line a minute, for requests and batch entries alike', async () => {
    t = await startTestServer({ plan: 'scale' })
    const server = t
    const file = join(server.dir, 'Organization.ndjson')
    writeFileSync(file, JSON.stringify({ resourceType: 'Organization', id: 'kept', name: 'Kept Clinic' }))
    expect((await runCli(['import', 'directory', file, '--db', server.dbPath])).code).toBe(0)
    // The release file damaged past its header: it opens, and every read of it fails.
    const release = join(
      server.dir,
      readdirSync(server.dir).find((name) => /\.directory-\d+\.db$/.test(name)) ?? '',
    )
    const bytes = readFileSync(release)
    bytes.fill(0xa5, 100)
    writeFileSync(release, bytes)
    const lines: string[] = []
    const spy = vi
      .spyOn(console, 'error')
      .mockImplementation((line: unknown) => void lines.push(String(line)))
    try {
      const search = await server.get('/v1/fhir/r4/Organization?name=kept', bearer(server.key))
      expect(search.status).toBe(503)
      const batch = await server.postFhir('/v1/fhir/r4', {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [{ request: { method: 'GET', url: 'Organization?name=kept' } }],
      })
      expect(batch.status).toBe(200)
      expect(batch.json.entry[0].response.status).toMatch(/^503/)
      server.setNow(server.now() + 61_000)
      expect((await server.get('/v1/fhir/r4/Organization?name=kept', bearer(server.key))).status).toBe(503)
    } finally {
      spy.mockRestore()
    }
    expect(lines).toEqual([
      expect.stringMatching(/^store unavailable, answering 503: .+ \(SQLITE_(CORRUPT|NOTADB)\w*\)$/),
      expect.stringMatching(/^store unavailable, answering 503 \(also 1 more times in the minute before\): /),
    ])
  })
})

describe('secrets', () => {
  it('never reach the database file, its WAL or the request log', async () => {
    const server = await startTestServer()
    for (let i = 0; i < 3; i++) await server.get('/v1/scheduling/publishers', bearer(server.key))
    await server.get('/v1/scheduling/publishers?api_key=x', { 'x-api-key': server.key })
    // Closing drains connections and flushes the buffered request log.
    await server.server.close()
    const live = openLiveStore({ db: server.dbPath }, { readonly: true })
    expect(live.prepare('SELECT count(*) FROM request_log').pluck().get()).toBe(4)
    live.close()
    const body = server.key.slice('svc_sk_'.length)
    const files = [server.dbPath, liveDatabasePath(server.dbPath)].flatMap((path) => [path, `${path}-wal`])
    expect(files.filter((path) => existsSync(path)).length).toBeGreaterThanOrEqual(2)
    for (const file of files.filter((path) => existsSync(path))) {
      expect(readFileSync(file).toString('latin1').includes(body)).toBe(false)
    }
    rmSync(server.dir, { recursive: true, force: true })
  })
})
