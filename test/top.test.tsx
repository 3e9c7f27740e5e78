import { spawn, spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { render } from 'ink-testing-library'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { liveDatabasePath } from '../src/db/live.js'
import { openDatabase } from '../src/app/store.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'
import { QUOTA_SQL } from '../src/stats/quota.js'
import { WINDOW_MS, WINDOW_SQL } from '../src/stats/requestWindow.js'
import { openTopSources, TopFeed } from '../src/stats/topFeed.js'
import { TopReader, type TopSnapshot } from '../src/stats/topSnapshot.js'
import { App, type AppProps } from '../src/tui/App.js'
import { snapshotText } from '../src/tui/Report.js'
import { CLI, runCli } from './support/cli.js'
import { bearer, DEFAULT_NOW, startTestServer, type TestServer } from './support/harness.js'

/**
 * One real server handles known traffic, then closes (which flushes its request log); every test reads
 * that file as `svc top` does. Traffic at DEFAULT_NOW (limits in force), counted below per organization:
 *   acme (Developer): 70 GET publishers → 60 × 200, 10 × 429 (60 a minute)
 *   beta (Team):      5 GET publishers, 2 GET metadata → 200; 1 GET /v1/nope → 404;
 *                     1 GET publishers while another connection holds the live file's write lock → 503
 *   gamma (Developer): 1,000 requests the day before use up its month; 1 GET publishers now → 429
 *   no key:           1 GET publishers → 401
 */
let t: TestServer
let dbPath: string
let now: number
const ids: Record<string, string> = {}
let slotsSynced: number
const DEMO_FEED = fileURLToPath(new URL('../data/scheduling/smart-examples/$bulk-publish', import.meta.url))

async function times(count: number, send: () => Promise<{ status: number }>): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) statuses.push((await send()).status)
  return statuses
}

beforeAll(async () => {
  t = await startTestServer({ busyTimeoutMs: 50 })
  dbPath = t.dbPath
  now = t.now()
  const db = t.server.db
  createOrganization(db, { slug: 'beta', name: 'Beta Labs', plan: 'team' })
  createOrganization(db, { slug: 'gamma', plan: 'developer' })
  const beta = createKey(db, { org: 'beta' }).key
  const gamma = createKey(db, { org: 'gamma' }).key
  addPublisher(db, { slug: 'county-clinics', manifestUrl: DEMO_FEED })
  addPublisher(db, { slug: 'gone', manifestUrl: join(t.dir, 'no-such-feed', '$bulk-publish') })
  const synced = await syncPublisher(db, 'county-clinics', { clock: t.now })
  expect(synced).toMatchObject({ outcome: 'synced', written: expect.any(Number) })
  slotsSynced = synced.written
  expect((await syncPublisher(db, 'gone', { clock: t.now })).outcome).toBe('failed')

  const dayBefore = Date.parse('2026-11-20T08:00:00Z')
  for (let minute = 0; minute < 17; minute++) {
    t.setNow(dayBefore + minute * 60_000)
    await Promise.all(Array.from({ length: 60 }, () => t.get('/v1/scheduling/publishers', bearer(gamma))))
  }
  t.setNow(now)

  const acme = await times(70, () => t.get('/v1/scheduling/publishers', bearer(t.key)))
  expect(acme.filter((status) => status === 429)).toHaveLength(10)
  await times(5, () => t.get('/v1/scheduling/publishers', bearer(beta)))
  await times(2, () => t.get('/v1/fhir/r4/metadata', bearer(beta)))
  expect((await t.get('/v1/nope', bearer(beta))).status).toBe(404)
  expect((await t.get('/v1/scheduling/publishers')).status).toBe(401)
  const blocked = await t.get('/v1/scheduling/publishers', bearer(gamma))
  expect(blocked.status).toBe(429)
  ids.blocked = blocked.headers['x-request-id'] as string

  // Settled first, so beta's next request must take a new lease from the locked live file.
  await t.server.flush()
  const other = new Database(liveDatabasePath(dbPath))
  other.exec('BEGIN IMMEDIATE')
  try {
    const unavailable = await t.get('/v1/scheduling/publishers', bearer(beta))
    expect(unavailable.status).toBe(503)
    ids.unavailable = unavailable.headers['x-request-id'] as string
  } finally {
    other.exec('ROLLBACK')
    other.close()
  }
  await t.server.close()
}, 120_000)

afterAll(() => rmSync(t.dir, { recursive: true, force: true }))

function readOnce(filter: string | null = null): TopSnapshot {
  const feed = new TopFeed(dbPath)
  try {
    return feed.read(now, filter)
  } finally {
    feed.close()
  }
}

/** Nearest-rank percentiles of the logged durations in the window: what the histogram approximates. */
function exactPercentiles(): { p50: number; p95: number; p99: number } {
  const db = new Database(liveDatabasePath(dbPath), { readonly: true })
  const durations = db
    .prepare('SELECT duration_ms FROM request_log WHERE at > ? ORDER BY duration_ms')
    .pluck()
    .all(now - WINDOW_MS) as number[]
  db.close()
  const at = (p: number) => durations[Math.ceil((p / 100) * durations.length) - 1] as number
  return { p50: at(50), p95: at(95), p99: at(99) }
}

describe('the snapshot of a store that served known traffic', () => {
  it('counts requests by status class, organization and endpoint', () => {
    const snapshot = readOnce()
    expect(snapshot.state).toBe('ready')
    expect(snapshot.traffic.requests).toBe(70 + 9 + 1 + 1)
    expect(snapshot.traffic.byClass).toEqual({ '2xx': 67, '3xx': 0, '4xx': 2, '429': 11, '5xx': 1 })
    expect(snapshot.traffic.perSecond).toBeCloseTo(81 / 10)
    expect(snapshot.traffic.history.perSecond.at(-1)).toBeCloseTo(81 / 10)
    expect(snapshot.topOrgs).toEqual([
      { org: 'acme', requests: 70, errors: 10, rejected: 10 },
      { org: 'beta', requests: 9, errors: 2, rejected: 0 },
      { org: null, requests: 1, errors: 1, rejected: 0 },
      { org: 'gamma', requests: 1, errors: 1, rejected: 1 },
    ])
    // Refused before routing, 401s and 429s still count for the endpoint their path names.
    expect(snapshot.topEndpoints.map(({ p95Ms, ...rest }) => rest)).toEqual([
      { method: 'GET', route: '/v1/scheduling/publishers', group: 'scheduling', requests: 78, errors: 13 },
      { method: 'GET', route: '/v1/fhir/r4/metadata', group: 'fhir', requests: 2, errors: 0 },
      { method: 'GET', route: '(unmatched)', group: 'unmatched', requests: 1, errors: 1 },
    ])
    expect(snapshot.latency.groups.map((group) => [group.group, group.requests])).toEqual([
      ['scheduling', 78],
      ['fhir', 2],
      ['unmatched', 1],
    ])
  })

  it('gives latency percentiles within 1% of the exact ones', () => {
    const { overall } = readOnce().latency
    const exact = exactPercentiles()
    expect(overall?.requests).toBe(81)
    expect(Math.abs((overall?.p50Ms as number) / exact.p50 - 1)).toBeLessThan(0.011)
    expect(Math.abs((overall?.p95Ms as number) / exact.p95 - 1)).toBeLessThan(0.011)
    expect(Math.abs((overall?.p99Ms as number) / exact.p99 - 1)).toBeLessThan(0.011)
  })

  it("shows each organization's quota, nearest its monthly allowance first, and when a block ends", () => {
    expect(readOnce().quota).toEqual([
      {
        org: 'gamma',
        name: 'gamma',
        plan: 'Developer',
        minute: { used: 0, limit: 60 },
        month: { used: 1000, limit: 1000 },
        rejected: 1,
        limited: 'month',
        resetsAt: '2026-12-01T00:00:00.000Z',
      },
      {
        org: 'acme',
        name: 'Acme',
        plan: 'Developer',
        minute: { used: 60, limit: 60 },
        month: { used: 60, limit: 1000 },
        rejected: 10,
        limited: 'minute',
        resetsAt: null,
      },
      {
        org: 'beta',
        name: 'Beta Labs',
        plan: 'Team',
        minute: { used: 8, limit: 600 },
        month: { used: 8, limit: 50000 },
        rejected: 0,
        limited: null,
        resetsAt: null,
      },
    ])
  })

  it('lists recent errors newest first with their request ids, and publishers', () => {
    const snapshot = readOnce()
    expect(snapshot.recentErrors[0]).toEqual({
      at: DEFAULT_NOW,
      status: 503,
      method: 'GET',
      path: '/v1/scheduling/publishers',
      requestId: ids.unavailable,
      org: 'beta',
    })
    expect(snapshot.recentErrors.map((error) => error.status).sort()).toEqual([
      401,
      404,
      ...Array(11).fill(429),
      503,
    ])
    expect(snapshot.recentErrors).toContainEqual(
      expect.objectContaining({ requestId: ids.blocked, org: 'gamma' }),
    )
    expect(slotsSynced).toBeGreaterThan(0)
    expect(snapshot.publishers).toEqual([
      {
        slug: 'county-clinics',
        name: 'county-clinics',
        enabled: true,
        lastSyncAt: DEFAULT_NOW,
        lastSyncResult: 'synced',
        slotsHeld: slotsSynced,
      },
      {
        slug: 'gone',
        name: 'gone',
        enabled: true,
        lastSyncAt: DEFAULT_NOW,
        lastSyncResult: expect.stringMatching(/^failed: ./),
        slotsHeld: 0,
      },
    ])
  })

  it('narrows every figure to the organizations a filter matches', () => {
    const snapshot = readOnce('bet')
    expect(snapshot.filter).toBe('bet')
    expect(snapshot.traffic.requests).toBe(9)
    expect(snapshot.traffic.byClass).toEqual({ '2xx': 7, '3xx': 0, '4xx': 1, '429': 0, '5xx': 1 })
    expect(snapshot.quota.map((quota) => quota.org)).toEqual(['beta'])
    expect(snapshot.topOrgs.map((org) => org.org)).toEqual(['beta'])
    expect(snapshot.recentErrors.map((error) => error.status)).toEqual([503, 404])
  })

  it('reads each later refresh from what was added since, and forgets requests past the window', () => {
    const sources = openTopSources(dbPath)
    if (!sources) throw new Error('store missing')
    try {
      const reader = new TopReader(sources)
      expect(reader.read(now).traffic.requests).toBe(81)
      expect(reader.read(now + 1000).traffic.requests).toBe(81)
      const later = reader.read(now + WINDOW_MS)
      expect(later.traffic.requests).toBe(0)
      expect(later.recentErrors).toHaveLength(14)
      expect(later.quota.find((quota) => quota.org === 'acme')?.minute.used).toBe(0)
    } finally {
      sources.close()
    }
  })

  it('reads the request log and usage counters only through their indexes', () => {
    const db = new Database(liveDatabasePath(dbPath), { readonly: true })
    const plan = (sql: string) =>
      (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(sql.match(/\?/g) ?? []).map(() => 0)) as {
          detail: string
        }[]
      )
        .map((step) => step.detail)
        .join('; ')
    try {
      expect(plan(WINDOW_SQL.history)).toMatch(/USING COVERING INDEX request_log_at \(at>\?\)/)
      expect(plan(WINDOW_SQL.firstRowId)).toMatch(/USING COVERING INDEX request_log_at \(at>\?\)/)
      expect(plan(WINDOW_SQL.errors)).toMatch(/USING INDEX request_log_at \(at>\?\)/)
      for (const rows of [WINDOW_SQL.counted, WINDOW_SQL.newErrors])
        expect(plan(rows)).toMatch(/^SEARCH request_log USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$/)
      expect(plan(WINDOW_SQL.errors)).not.toMatch(/TEMP B-TREE FOR ORDER BY.*SCAN request_log/)
      expect(plan(QUOTA_SQL)).toMatch(/SEARCH usage_counters USING PRIMARY KEY \(org_id=\? AND period=\?\)/)
      expect(plan(QUOTA_SQL)).not.toMatch(/SCAN usage_counters/)
    } finally {
      db.close()
    }
  })
})

/** Waits (without a clock) until Ink has drawn a frame that passes `check`. */
async function frameWhere(
  instance: ReturnType<typeof render>,
  check: (frame: string) => boolean,
): Promise<string> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const frame = instance.lastFrame() ?? ''
    if (check(frame)) return frame
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`no frame passed the check; last frame:\n${instance.lastFrame()}`)
}

function renderApp(load: AppProps['load'], size = { columns: 80, rows: 24 }) {
  return render(<App database={dbPath} load={load} intervalMs={3_600_000} size={size} />)
}

function expectFits(frame: string, size: { columns: number; rows: number }) {
  const lines = frame.split('\n')
  expect(lines.length).toBeLessThanOrEqual(size.rows)
  for (const line of lines) expect(line.length).toBeLessThanOrEqual(size.columns)
}

const ESC = '\u001b'
const KEYS = { tab: '\t', down: `${ESC}[B`, right: `${ESC}[C`, enter: '\r', escape: ESC }

describe('the live screen', () => {
  let feed: TopFeed
  beforeAll(() => {
    feed = new TopFeed(dbPath)
  })
  afterAll(() => feed.close())
  const load = (filter: string | null) => feed.read(now, filter)

  it('fits 80x24 and shows traffic, latency by group, top endpoints and organizations', async () => {
    const app = renderApp(load)
    try {
      const frame = await frameWhere(app, (text) => text.includes('Traffic'))
      expectFits(frame, { columns: 80, rows: 24 })
      expect(frame).toMatch(/2xx 67 +3xx 0 +4xx 2 +429 11 +5xx 1/)
      expect(frame).toMatch(/Latency +p50 \S+ms +p95 \S+ms +p99 \S+ms/)
      expect(frame).toMatch(/scheduling +78 /)
      expect(frame).toMatch(/GET \/v1\/scheduling\/publishers +78 +13 /)
      expect(frame).toMatch(/acme +70 +10 +10/)
      expect(frame).toMatch(/\(no key\) +1 +1 +0/)
    } finally {
      app.unmount()
    }
  })

  it('reflows on a wide terminal: endpoints and organizations side by side', async () => {
    const size = { columns: 140, rows: 30 }
    const app = renderApp(load, size)
    try {
      const frame = await frameWhere(app, (text) => text.includes('Traffic'))
      expectFits(frame, size)
      expect(frame).toMatch(/Top endpoints +Top organizations/)
    } finally {
      app.unmount()
    }
  })

  it('draws again only when the figures change', async () => {
    let shown = load(null)
    let loaded: (() => void) | undefined
    const loads = (count: number) =>
      new Promise<void>((resolve) => {
        loaded = () => {
          if (--count === 0) resolve()
        }
      })
    const app = render(
      <App
        database={dbPath}
        // A new object every time, as a real read gives, with the same figures until `shown` changes.
        load={() => {
          loaded?.()
          return structuredClone(shown)
        }}
        intervalMs={1}
        size={{ columns: 80, rows: 24 }}
      />,
    )
    try {
      await frameWhere(app, (text) => text.includes('Traffic'))
      const drawn = app.frames.length
      await loads(5)
      expect(app.frames.length).toBe(drawn)
      shown = load('bet')
      await frameWhere(app, (text) => text.includes('org ~ "bet"'))
      expect(app.frames.length).toBe(drawn + 1)
    } finally {
      app.unmount()
    }
  })

  it('switches views with tab and arrows, selects with arrows, and filters with / and enter', async () => {
    const app = renderApp(load)
    try {
      await frameWhere(app, (text) => text.includes('Traffic'))
      app.stdin.write(KEYS.tab)
      let frame = await frameWhere(app, (text) => text.includes('ORGANIZATION PLAN'))
      expectFits(frame, { columns: 80, rows: 24 })
      expect(frame).toMatch(/gamma +Developer +0\/60 +█+ +1k\/1k +1 blocked 9d 13h/)
      expect(frame).toMatch(/acme +Developer +60\/60 .* 60\/1k +10 minute full/)
      expect(frame).toMatch(/beta +Team +8\/600 .* 8\/50k +0 ok/)
      expect(frame).toContain('gamma (gamma), Developer: 0 of 60 this minute, 1,000 of 1,000 this month')
      expect(frame).toContain('month allowance used: refused until 2026-12-01 00:00 UTC, in 9d 13h')

      app.stdin.write(KEYS.down)
      frame = await frameWhere(app, (text) => text.includes('Acme (acme), Developer'))
      expect(frame).toContain('minute limit reached')
      app.stdin.write(KEYS.enter)
      frame = await frameWhere(app, (text) => text.includes('org ~ "acme"'))
      expect(frame).not.toMatch(/^beta /m)

      app.stdin.write(KEYS.escape)
      await frameWhere(app, (text) => !text.includes('org ~') && /^beta /m.test(text))
      app.stdin.write('/')
      for (const char of 'bet') app.stdin.write(char)
      await frameWhere(app, (text) => text.includes('/ organization: bet_'))
      app.stdin.write(KEYS.enter)
      frame = await frameWhere(app, (text) => text.includes('org ~ "bet"'))
      expect(frame).toMatch(/^beta /m)
      expect(frame).not.toMatch(/^acme /m)

      app.stdin.write(KEYS.right)
      frame = await frameWhere(app, (text) => text.includes('Recent errors'))
      expectFits(frame, { columns: 80, rows: 24 })
      expect(frame).toMatch(/10:00:30 503 +GET +\/v1\/scheduling\/publishers +beta/)
      expect(frame).toContain(`svc requests show ${ids.unavailable}`)

      app.stdin.write(KEYS.tab)
      frame = await frameWhere(app, (text) => text.includes('PUBLISHER'))
      expect(frame).toMatch(new RegExp(`county-clinics +yes +0s ago +${slotsSynced} synced`))
      expect(frame).toMatch(/gone +yes +0s ago +0 failed: /)
    } finally {
      app.unmount()
    }
  })
})

describe('an empty store', () => {
  it('waits for a database file that does not exist yet, without creating it', async () => {
    const missing = join(t.dir, 'not-yet', 'svc.db')
    const empty = new TopFeed(missing)
    const app = renderApp((filter) => empty.read(now, filter))
    try {
      const frame = await frameWhere(app, (text) => text.includes('Waiting for'))
      expect(frame).toContain('there is no database there yet')
      expectFits(frame, { columns: 80, rows: 24 })
    } finally {
      app.unmount()
      empty.close()
    }
    const result = await runCli(['top', '--json'], { SVC_DB: missing })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ state: 'waiting', traffic: { requests: 0 }, quota: [] })
    expect(() => new Database(missing, { fileMustExist: true })).toThrow()
  })

  it('says why a file that is there cannot be read, on the screen, in --once and in --json', async () => {
    const junk = join(t.dir, 'junk.db')
    writeFileSync(junk, 'not a database, though it sits where one should'.repeat(200))
    const feed = new TopFeed(junk)
    const app = renderApp((filter) => feed.read(now, filter))
    try {
      const frame = await frameWhere(app, (text) => text.includes('Cannot read'))
      // The screen names the path it was started with (here the suite's, as renderApp gives it).
      expect(frame.replace(/\s+/g, ' ')).toContain(
        `Cannot read ${dbPath}: file is not a database (SQLITE_NOTADB).`,
      )
      expectFits(frame, { columns: 80, rows: 24 })
    } finally {
      app.unmount()
      feed.close()
    }
    const once = await runCli(['top', '--once'], { SVC_DB: junk })
    expect(once.code).toBe(0)
    expect(once.stdout.trim()).toBe(
      `svc top: cannot read the database at ${junk}: file is not a database (SQLITE_NOTADB).`,
    )
    const json = await runCli(['top', '--json'], { SVC_DB: junk })
    expect(JSON.parse(json.stdout)).toMatchObject({
      state: 'waiting',
      problem: 'file is not a database (SQLITE_NOTADB)',
    })
  })

  it('shows an empty state, not an error, on a store no request has reached', async () => {
    const path = join(t.dir, 'fresh.db')
    openDatabase(path).close()
    const fresh = new TopFeed(path)
    const app = renderApp((filter) => fresh.read(now, filter))
    try {
      let frame = await frameWhere(app, (text) => text.includes('Traffic'))
      expect(frame).toContain('0.0/s now · 0 in 60s')
      expect(frame).toContain('no requests in the last 60s')
      app.stdin.write(KEYS.tab)
      await frameWhere(app, (text) => text.includes('no organizations yet'))
    } finally {
      app.unmount()
      fresh.close()
    }
    const text = snapshotText(readEmpty(path), path, 80)
    expect(text).toContain('no publishers')
  })
})

function readEmpty(path: string): TopSnapshot {
  const feed = new TopFeed(path)
  try {
    return feed.read(now)
  } finally {
    feed.close()
  }
}

describe('svc top --once', () => {
  const env = () => ({ SVC_DB: dbPath, SVC_FAKE_NOW: DEFAULT_NOW })

  it('--json gives the figures of the traffic sent', async () => {
    const result = await runCli(['top', '--once', '--json'], env())
    expect(result.code).toBe(0)
    const snapshot = JSON.parse(result.stdout)
    expect(snapshot).toMatchObject({
      database: dbPath,
      state: 'ready',
      at: DEFAULT_NOW,
      traffic: { requests: 81, byClass: { '2xx': 67, '4xx': 2, '429': 11, '5xx': 1 } },
    })
    expect(
      snapshot.quota.map((quota: { org: string; month: { used: number } }) => [quota.org, quota.month.used]),
    ).toEqual([
      ['gamma', 1000],
      ['acme', 60],
      ['beta', 8],
    ])
    expect(snapshot.recentErrors[0].requestId).toBe(ids.unavailable)
  })

  it('prints every panel as text when not on a terminal', async () => {
    const result = await runCli(['top'], env())
    expect(result.code).toBe(0)
    for (const title of [
      'Traffic',
      'Latency',
      'Top endpoints',
      'Top organizations',
      'Quota',
      'Recent errors',
      'Publishers',
    ])
      expect(result.stdout).toContain(title)
    expect(result.stdout).toMatch(/gamma +Developer .* blocked 9d 13h/)
    expect(result.stdout).toContain(ids.unavailable)
    expect(result.stdout).not.toMatch(/\u001b\[/)
  })
})

const hasScript = spawnSync('script', ['--version']).status === 0

describe('svc top on a terminal', () => {
  // util-linux `script` gives the command a pseudo-terminal, as a user's shell would.
  it.skipIf(!hasScript)('draws on the alternate screen, switches view on tab and quits on q', async () => {
    const command = `stty cols 80 rows 24; exec node ${JSON.stringify(CLI)} top`
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: {
        PATH: process.env.PATH ?? '',
        TERM: 'xterm-256color',
        SVC_DB: dbPath,
        SVC_FAKE_NOW: DEFAULT_NOW,
      },
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!output.includes(text)) return
          child.stdout.off('data', check)
          resolve()
        }
        child.stdout.on('data', check)
        child.once('exit', () => reject(new Error(`exited before showing "${text}": ${output}`)))
        check()
      })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    try {
      await seen('Top organizations')
      child.stdin.write('\t')
      await seen('blocked 9d 13h')
      child.stdin.write('q')
      expect(await exited).toBe(0)
      expect(output).toContain('\u001b[?1049h')
      expect(output).toContain('\u001b[?1049l')
    } finally {
      child.kill()
    }
  })
})
