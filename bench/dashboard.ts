import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { createKey } from '../src/accounts/keys.js'
import { createOperator } from '../src/accounts/operators.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { openDatabase, openLiveStore } from '../src/app/store.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import {
  formatTable,
  type LoadResult,
  loadTable,
  measure,
  medianOf,
  percentile,
  verdict,
} from './lib/load.js'
import { seededRandom } from './lib/random.js'
import { SHAPE, startFeedProcess } from './lib/slotFeed.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { syncPublishers } from '../src/scheduling/sync/syncPublisher.js'

const CONNECTIONS = 50
const ROUNDS = 3
const PAGE_GOAL_MS = 100
const RATIO_GOAL = 0.98
const PATH = '/v1/scheduling/publishers'
const ORGS = 120
// Before 2026-11-01 no limit refuses: bench traffic is counted, never answered 429 (see overhead.ts).
const NOW = Date.parse('2026-10-28T12:00:00.000Z')
const clock = () => NOW
const DAY_MS = 24 * 3_600_000
const EMAIL = 'bench@example.org'
const PASSWORD = 'bench password, long enough'
const PATHS = [
  '/v1/scheduling/slots',
  '/v1/fhir/r4/Practitioner',
  '/v1/fhir/r4/InsurancePlan',
  '/v1/fhir/r4/metadata',
  '/v1/scheduling/provider-locations',
]

function parse(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string', default: '5' },
      'seed-rows': { type: 'string', default: '1000000' },
      samples: { type: 'string', default: '40' },
      // Publishers of the generated national slot set synced first (50: 2,000,000 slots); 0 leaves it out.
      publishers: { type: 'string', default: String(SHAPE.publishers) },
    },
  })
  return {
    durationSeconds: Number(values.duration),
    seedRows: Number(values['seed-rows']),
    samples: Number(values.samples),
    publishers: Math.min(Number(values.publishers), SHAPE.publishers),
  }
}

/**
 * 30 days of requests from 120 organizations (a few heavy, most light), statuses mostly 200 with 4xx, 429 and
 * 5xx among them, and the hourly tallies the server's log writer would have kept for them.
 */
function seedRequestLog(dbPath: string, rows: number, keyIds: string[]): void {
  const live = openLiveStore({ db: dbPath })
  const random = seededRandom(7)
  const insert = live.prepare(
    `INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, grp, status, duration_ms, bytes)
     VALUES (?, ?, ?, ?, 'GET', ?, ?, 'scheduling', ?, ?, 900)`,
  )
  const from = NOW - 30 * DAY_MS
  live.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const org = 1 + Math.floor(ORGS * random() ** 3)
      const roll = random()
      const status = roll < 0.002 ? 500 : roll < 0.01 ? 429 : roll < 0.04 ? 404 : roll < 0.06 ? 400 : 200
      const path = PATHS[Math.floor(random() * PATHS.length)] as string
      insert.run(
        `seed-${i}`,
        from + Math.floor((i / rows) * 30 * DAY_MS),
        org,
        keyIds[org - 1] ?? null,
        path,
        path,
        status,
        random() * 8,
      )
    }
    live.exec(`INSERT INTO request_hours (hour, org_id, requests, limited, failed)
      SELECT at / 3600000, coalesce(org_id, 0), count(*), sum(status = 429), sum(status >= 500) FROM request_log GROUP BY 1, 2`)
  })()
  live.close()
}

async function signIn(url: string): Promise<string> {
  const answer = await request(`${url}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ email: EMAIL, password: PASSWORD }).toString(),
  })
  await answer.body.text()
  return String(answer.headers['set-cookie']).split(';')[0] as string
}

/** Server time of each page, from its own timing: what the page costs, not the loopback round trip. */
async function timePage(url: string, cookie: string, samples: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < samples; i++) {
    const started = performance.now()
    const answer = await request(url, { headers: { cookie } })
    await answer.body.text()
    if (answer.statusCode !== 200) throw new Error(`${url} answered ${answer.statusCode}`)
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)
}

export async function run(args: string[]): Promise<void> {
  const { durationSeconds, seedRows, samples, publishers } = parse(args)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-dashboard-'))
  const dbPath = join(dir, 'svc.db')
  let server: RunningServer | undefined
  try {
    const setup = openDatabase(dbPath)
    const keyIds: string[] = []
    let benchKey = ''
    for (let org = 1; org <= ORGS; org++) {
      createOrganization(setup, { slug: `org-${org}`, name: `Organization ${org}`, plan: 'scale' })
      const created = createKey(setup, { org: `org-${org}`, name: 'app' })
      keyIds.push(created.id)
      if (org === 1) benchKey = created.key
    }
    createOperator(setup, { email: EMAIL, password: PASSWORD })
    if (publishers > 0) {
      console.log(`Syncing ${publishers} publishers of the generated national slot set...`)
      const feed = await startFeedProcess()
      try {
        for (let p = 0; p < publishers; p++)
          addPublisher(setup, { slug: `p${p}`, manifestUrl: `${feed.url}/p${p}/$bulk-publish` })
        const reports = await syncPublishers(setup, { clock: Date.now })
        const slots = reports.reduce((sum, report) => sum + report.written, 0)
        console.log(`  ${slots.toLocaleString('en-US')} slots`)
      } finally {
        feed.stop()
      }
    }
    setup.close()
    console.log(`Seeding the request log with ${seedRows.toLocaleString('en-US')} requests over 30 days...`)
    seedRequestLog(dbPath, seedRows, keyIds)

    server = await startServer(await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {}), clock)
    const base = server.url
    const cookie = await signIn(base)
    const pages: [string, string][] = [
      ['overview', '/dashboard'],
      ['live figures', '/dashboard/live.json'],
      ['organizations', '/dashboard/organizations'],
      ['an organization', '/dashboard/organizations/org-60'],
      ['requests', '/dashboard/requests'],
      ['requests, one org', '/dashboard/requests?org=org-90'],
      ['requests, 5xx', '/dashboard/requests?status=5xx'],
      ['requests, path', '/dashboard/requests?path=%2Fv1%2Ffhir%2Fr4%2FInsurancePlan'],
      ['requests, a day', '/dashboard/requests?from=2026-10-10T00%3A00&to=2026-10-11T00%3A00'],
      ['requests, key + 429', `/dashboard/requests?key=${keyIds[100]}&status=429`],
      ['one request', '/dashboard/requests/seed-500000'],
      ['data', '/dashboard/data'],
    ]
    const rows: string[][] = []
    for (const [name, path] of pages) {
      const times = await timePage(`${base}${path}`, cookie, samples)
      const p50 = percentile(times, 50)
      const p99 = percentile(times, 99)
      rows.push([name, p50.toFixed(1), p99.toFixed(1), verdict(p99 < PAGE_GOAL_MS)])
    }
    console.log(
      `\nDashboard pages, ${samples} requests each, ms (loopback round trip included), goal < ${PAGE_GOAL_MS} ms:`,
    )
    console.log(formatTable(['page', 'p50', 'p99', 'goal'], rows))

    // An open dashboard: the overview's live refresh every 5 s (what dashboard.js does while it is visible).
    const load = () =>
      measure(`${base}${PATH}`, {
        connections: CONNECTIONS,
        durationSeconds,
        headers: { Authorization: `Bearer ${benchKey}` },
      })
    await load()
    const without: LoadResult[] = []
    const withOpen: LoadResult[] = []
    for (let round = 0; round < ROUNDS; round++) {
      without.push(await load())
      const refresh = setInterval(() => {
        void request(`${base}/dashboard/live.json`, { headers: { cookie } }).then((answer) =>
          answer.body.text(),
        )
      }, 5000)
      void request(`${base}/dashboard`, { headers: { cookie } }).then((answer) => answer.body.text())
      try {
        withOpen.push(await load())
      } finally {
        clearInterval(refresh)
      }
    }
    const idle = medianOf(without)
    const open = medianOf(withOpen)
    const ratio = open.requestsPerSecond / idle.requestsPerSecond
    console.log(
      `\nThroughput of ${PATH}, ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${durationSeconds} s:`,
    )
    console.log(
      loadTable([
        ['no dashboard', idle],
        ['dashboard open', open],
      ]),
    )
    console.log(`ratio ${ratio.toFixed(3)} (goal >= ${RATIO_GOAL}: ${verdict(ratio >= RATIO_GOAL)})`)
  } finally {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
