import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { openDatabase } from '../src/app/store.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { runCliMeasured } from '../test/support/cli.js'
import { formatTable, type LoadResult, measure, medianOf, startBareServer, verdict } from './lib/load.js'
import {
  FEED_START,
  locationOf,
  npiOf,
  SERVICE_TYPES,
  SHAPE,
  generateKeptFeed,
  startFeedProcess,
  SPECIALTIES,
  TOTAL_SLOTS,
} from './lib/slotFeed.js'
import { serverTimes } from './lib/fhirQueries.js'
import { builtRevisions } from './lib/builtRevisions.js'
import { type ComparedServer, compareShapes, sweepShapes } from './lib/schedulingSweep.js'

const SYNC_GOAL_SLOTS_PER_S = 150_000
const RSS_GOAL_MB = 300
// Issue 13's goals for every query shape, cold (answer cache off).
const P50_GOAL_MS = 2
const P99_GOAL_MS = 10
const COLD_RPS_GOAL = 1_000
const SERVER_TIME_SAMPLES = 200
// A slow query is sampled for this long at most, so the run ends in minutes.
const SERVER_TIME_BUDGET_MS = 10_000
const CONNECTIONS = 20
// The machine is shared: each query's three servers are loaded in turn, round after round, and each
// figure is the median of its rounds, so that a burst of other work lands on one round, not on one side.
const ROUNDS = 3
// Before the first query, so that it is not the one that pays for compiling the request path.
const WARMUP_SECONDS = 2

// Limits are in force from 2026-11-01: a clock before that counts every request but refuses none.
const clock = () => FEED_START
// Ten days after the sync: a third of the slots lie in the past, as when a publisher's feed stopped changing.
const LATER_DAYS = 10
const later = () => FEED_START + LATER_DAYS * 86_400_000

/** The mixed query set of the issue, built from the generator's own shape so every query has matches. */
/** A moment as the API takes it: ISO 8601 with seconds and an offset. */
const isoAt = (ms: number) => new Date(ms).toISOString()

/**
 * One query of each shape the cold goals name: filters alone and in pairs, lists (10 and 100 values), large
 * match sets, grouped listings (up to ~10,000 groups), deep offsets (5,000 filtered; 50,000 and 1,000,000
 * over everything), an explicit time window, no filter and an empty answer.
 */
function querySet(groupKey: string): [string, string][] {
  const { state, city } = locationOf(3, 7)
  const npiList = (length: number) =>
    Array.from({ length }, (_, index) => npiOf(index * 5, index * 13, index % 3)).join(',')
  const windowFrom = FEED_START + 3 * 86_400_000 + 17 * 60_000
  // Windows of 6 h, a day and a week, each starting and ending within an hour.
  const windowOf = (hours: number) =>
    `startAfter=${isoAt(windowFrom)}&startBefore=${isoAt(windowFrom + hours * 3_600_000)}`
  const window = windowOf(6)
  return [
    ['state + serviceTypeCode', `/v1/scheduling/slots?state=${state}&serviceTypeCode=${SERVICE_TYPES[4]}`],
    ['npi list (10)', `/v1/scheduling/slots?npi=${npiList(10)}`],
    ['npi list (100)', `/v1/scheduling/slots?npi=${npiList(100)}`],
    ['specialty', `/v1/scheduling/slots?specialty=${SPECIALTIES[7]}`],
    ['providerLocationKey', `/v1/scheduling/slots?providerLocationKey=${groupKey}`],
    ['city + isVirtual', `/v1/scheduling/slots?city=${encodeURIComponent(city)}&isVirtual=false`],
    ['deep offset (state)', `/v1/scheduling/slots?state=${state}&offset=5000`],
    ['grouped: state', `/v1/scheduling/provider-locations?state=${state}`],
    [
      'grouped: actors specialty',
      `/v1/scheduling/actors?specialty=${SPECIALTIES[7]}&acceptingPatients=newpt`,
    ],
    ['no filter (all 1.6M free)', '/v1/scheduling/slots'],
    ['window, no filter (6 h)', `/v1/scheduling/slots?${window}`],
    // A window's groups come from its hours (windowGroups.ts), not the lists' groups (held from a moment on).
    ['grouped: window (6 h)', `/v1/scheduling/provider-locations?${window}`],
    ['window, no filter (7 d)', `/v1/scheduling/slots?${windowOf(7 * 24)}`],
    ['grouped: window (24 h)', `/v1/scheduling/provider-locations?${windowOf(24)}`],
    ['grouped: window (7 d)', `/v1/scheduling/provider-locations?${windowOf(7 * 24)}`],
    [
      'grouped: window (24 h) + isVirtual',
      `/v1/scheduling/provider-locations?${windowOf(24)}&isVirtual=false`,
    ],
    [
      'grouped: window (24 h) + serviceTypeCode',
      `/v1/scheduling/provider-locations?${windowOf(24)}&serviceTypeCode=${SERVICE_TYPES[4]}`,
    ],
    ['deep offset 50,000', '/v1/scheduling/slots?offset=50000'],
    ['deep offset 1,000,000', '/v1/scheduling/slots?offset=1000000'],
    // The goal names grouped listings over 8,000 groups and more: three service types hold ~10,000.
    [
      'grouped: 3 service types',
      `/v1/scheduling/provider-locations?serviceTypeCode=${SERVICE_TYPES.slice(4, 7).join(',')}`,
    ],
    // A real taxonomy code the generator never uses: nothing matches.
    ['empty: specialty + state', `/v1/scheduling/slots?specialty=207Q00000X&state=${state}`],
  ]
}

interface SyncFigures {
  seconds: number
  written: number
  syncRate: number
  rssMb: number
  sizeMb: number
}

/**
 * Syncs the feed into `dbPath` as an operator does, `svc import publishers` in a process of its own (its
 * start included), and reports speed, that process's peak RSS and the database's size.
 */
async function syncFeed(
  feedUrl: string,
  dbPath: string,
  publishers: number,
  asOne: boolean,
): Promise<SyncFigures> {
  const db = openDatabase(dbPath)
  if (asOne)
    addPublisher(db, { slug: 'all', manifestUrl: `${feedUrl}/all/$bulk-publish?publishers=${publishers}` })
  for (let p = 0; p < publishers && !asOne; p++) {
    addPublisher(db, { slug: `p${p}`, manifestUrl: `${feedUrl}/p${p}/$bulk-publish` })
  }
  db.close()
  const synced = await runCliMeasured(['import', 'publishers', '--db', dbPath, '--json'])
  if (synced.code !== 0) throw new Error(`svc import publishers failed: ${synced.stderr}`)
  const reports = JSON.parse(synced.stdout) as { outcome: string; written: number }[]
  const failed = reports.filter((report) => report.outcome !== 'synced')
  if (failed.length > 0) throw new Error(`sync failed: ${JSON.stringify(failed[0])}`)
  const seconds = synced.ms / 1000
  const written = reports.reduce((sum, report) => sum + report.written, 0)
  const rss = synced.peakRssMb
  const checkpoint = openDatabase(dbPath)
  checkpoint.pragma('wal_checkpoint(TRUNCATE)')
  checkpoint.close()
  const sizeMb = statSync(dbPath).size / 1024 / 1024
  const syncRate = written / seconds
  console.log(
    `Sync: ${publishers} publishers${asOne ? "' feeds as one publisher's" : ''}, ${written.toLocaleString()} slots (expected ${((TOTAL_SLOTS * publishers) / SHAPE.publishers).toLocaleString()})`,
  )
  console.log(
    formatTable(
      ['figure', 'value', 'goal'],
      [
        ['time, `svc import publishers` start to exit', `${seconds.toFixed(1)} s`, ''],
        [
          'slots/s',
          Math.round(syncRate),
          `>= ${SYNC_GOAL_SLOTS_PER_S} ${syncRate >= SYNC_GOAL_SLOTS_PER_S ? 'met' : 'NOT met'}`,
        ],
        [
          'peak RSS of that process',
          `${rss.toFixed(0)} MB`,
          `< ${RSS_GOAL_MB} ${rss < RSS_GOAL_MB ? 'met' : 'NOT met'}`,
        ],
        [
          'CPU time of that process, every thread',
          `${synced.cpuSeconds.toFixed(1)} s = ${(synced.cpuSeconds / (written / 1e6)).toFixed(1)} s per million slots, ${(synced.cpuSeconds / seconds).toFixed(2)} cores`,
          '',
        ],
        ['database size', `${sizeMb.toFixed(0)} MB`, ''],
        ['database size per million slots', `${(sizeMb / (written / 1e6)).toFixed(0)} MB`, ''],
      ],
    ),
  )
  return { seconds, written, syncRate, rssMb: rss, sizeMb }
}

/** `--against`: the sweep's shapes on `revision` and on this checkout, cold, interleaved (compareShapes). */
async function compareWith(revision: string, dbPath: string, only: string | undefined) {
  const { base, current, dispose } = await builtRevisions(revision)
  const sides: ComparedServer[] = []
  try {
    for (const [name, built] of [
      ['base', base],
      ['current', current],
    ] as const) {
      const setup = openDatabase(dbPath)
      const org = createOrganization(setup, { slug: `bench-${name}-${Date.now()}`, plan: 'scale' })
      const { key } = createKey(setup, { org: org.slug })
      setup.close()
      const options = { db: dbPath, port: 0, host: '127.0.0.1' }
      const server = await built.startServer(options, { SVC_ANSWER_CACHE_MB: '0' }, clock)
      sides.push({ label: built.label, server, key, org: org.id })
    }
    const result = await compareShapes(sides as [ComparedServer, ComparedServer], only)
    console.log(`\nRESULT ${JSON.stringify(result)}`)
  } finally {
    for (const { server } of sides) await server.close()
    dispose()
  }
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string', default: '2' },
      // A smaller run for profiling the sync: `--publishers 5 --sync-only`.
      publishers: { type: 'string', default: String(SHAPE.publishers) },
      'sync-only': { type: 'boolean', default: false },
      // The publishers' feeds synced as one publisher's (a national chain's): one part, one transaction.
      'as-one': { type: 'boolean', default: false },
      // Leave the synced database in place (its path is printed) for looking at query plans afterwards.
      keep: { type: 'boolean', default: false },
      // Sync the feed files an earlier `--keep` run left (`<its dir>/feed`; any missing are generated first)
      // instead of generating them all: old and new code measured on the same files, one after the other.
      feed: { type: 'string' },
      // Query a database left by an earlier `--keep` run instead of generating and syncing one (minutes).
      db: { type: 'string' },
      // Only the query shapes whose label contains this text (`--only window`).
      only: { type: 'string' },
      // Every filter alone and in pairs over the three listings, cold, instead of the query set (~5 min).
      sweep: { type: 'boolean', default: false },
      // The sweep's shapes (with --only, those matching) on this checkout and on a revision built beside it
      // (a commit, branch or tag), each query sent to both in turn: `--db <kept> --against main --only slots`.
      against: { type: 'string' },
    },
  })
  const durationSeconds = Number(values.duration)
  const publishers = Math.min(Number(values.publishers), SHAPE.publishers)
  const reused = values.db
  const dir = reused === undefined ? mkdtempSync(join(tmpdir(), 'svc-bench-scheduling-')) : undefined
  const dbPath = reused ?? join(dir as string, 'svc.db')
  // The publishers' files are generated and kept first, then served as files: the generator stands in for
  // the publishers' own machines, and its CPU is not the sync's.
  const feedDir = dir === undefined ? undefined : (values.feed ?? join(dir, 'feed'))
  if (feedDir && values.feed === undefined) mkdirSync(feedDir)
  const feed = feedDir === undefined ? undefined : await startFeedProcess(feedDir)
  if (feed) await generateKeptFeed(feed.url, publishers, values['as-one'])
  try {
    const sync = feed ? await syncFeed(feed.url, dbPath, publishers, values['as-one']) : undefined
    if (!sync) console.log(`Sync skipped: querying ${dbPath} as an earlier run left it.`)
    if (values['sync-only']) return
    if (values.against !== undefined) {
      await compareWith(values.against, dbPath, values.only)
      return
    }
    const setup = openDatabase(dbPath)
    // A reused database keeps the organizations of earlier runs.
    const org = `bench-${Date.now()}`
    createOrganization(setup, { slug: org, plan: 'scale' })
    const { key } = createKey(setup, { org })
    setup.close()
    if (values.sweep) {
      const cold = await startServer(
        await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
        clock,
      )
      const shapes = await sweepShapes(cold, key, { p50: P50_GOAL_MS, p99: P99_GOAL_MS })
      await cold.close()
      console.log(`\nRESULT ${JSON.stringify({ sync, sweep: shapes })}`)
      return
    }
    // Two servers on the one file: "cold" keeps no answers, so every request runs its query; "warm" answers
    // a repeated search from its answer cache (src/http/answerCache.ts), as a busy server mostly does.
    const servers = {
      cold: await startServer(
        await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
        clock,
      ),
      warm: await startServer(await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {}), clock),
      later: await startServer(
        await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
        later,
      ),
    }
    const headers = { Authorization: `Bearer ${key}` }
    const get = async (url: string) => {
      const response = await fetch(url, { headers })
      const body = Buffer.from(await response.arrayBuffer())
      if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body}`)
      return { body, contentType: response.headers.get('content-type') ?? 'application/json' }
    }
    const timesOf = (server: RunningServer, path: string) =>
      serverTimes(server, key, [path], { requests: SERVER_TIME_SAMPLES, budgetMs: SERVER_TIME_BUDGET_MS })
    const load = (url: string, seconds = durationSeconds) =>
      measure(url, { connections: CONNECTIONS, durationSeconds: seconds, headers })
    const groups = JSON.parse(
      (
        await get(
          `${servers.cold.url}/v1/scheduling/provider-locations?state=${locationOf(3, 7).state}&limit=1`,
        )
      ).body.toString(),
    )
    const rows: (string | number)[][] = []
    const results: Record<string, unknown>[] = []
    const shapes = querySet(groups.providerLocations[0].key)
    const queries = shapes.filter(([label]) => values.only === undefined || label.includes(values.only))
    const [, firstPath] = shapes[0] as [string, string]
    const warmup = await startBareServer((await get(`${servers.cold.url}${firstPath}`)).body, {})
    // Every server warms up alike (the later one ran its first requests in the interpreter, and its p99
    // showed it).
    for (const url of [servers.cold.url, servers.warm.url, servers.later.url, warmup.url])
      await load(`${url}${firstPath}`, WARMUP_SECONDS)
    await warmup.close()
    for (const [label, path] of queries) {
      const sample = await get(`${servers.cold.url}${path}`)
      const total = JSON.parse(sample.body.toString()).total
      const cold = await timesOf(servers.cold, path)
      const warm = await timesOf(servers.warm, path)
      const afterDays = await timesOf(servers.later, path)
      const bare = await startBareServer(sample.body, { 'Content-Type': sample.contentType })
      const rounds = { cold: [] as LoadResult[], warm: [] as LoadResult[], bare: [] as LoadResult[] }
      for (let round = 0; round < ROUNDS; round++) {
        rounds.cold.push(await load(`${servers.cold.url}${path}`))
        rounds.warm.push(await load(`${servers.warm.url}${path}`))
        rounds.bare.push(await load(`${bare.url}${path}`))
      }
      await bare.close()
      const [coldLoad, warmLoad, floor] = [rounds.cold, rounds.warm, rounds.bare].map(medianOf) as [
        LoadResult,
        LoadResult,
        LoadResult,
      ]
      const coldRatio = coldLoad.requestsPerSecond / floor.requestsPerSecond
      const warmRatio = warmLoad.requestsPerSecond / floor.requestsPerSecond
      rows.push([
        label,
        total,
        cold.p50.toFixed(2),
        cold.p99.toFixed(2),
        warm.p50.toFixed(2),
        warm.p99.toFixed(2),
        afterDays.p50.toFixed(2),
        afterDays.p99.toFixed(2),
        Math.round(coldLoad.requestsPerSecond),
        Math.round(warmLoad.requestsPerSecond),
        Math.round(floor.requestsPerSecond),
        coldRatio.toFixed(2),
        warmRatio.toFixed(2),
        coldLoad.non2xx + coldLoad.errors + warmLoad.non2xx + warmLoad.errors,
        verdict(
          [cold, afterDays].every(({ p50, p99 }) => p50 < P50_GOAL_MS && p99 < P99_GOAL_MS) &&
            coldLoad.requestsPerSecond >= COLD_RPS_GOAL,
        ),
      ])
      results.push({
        label,
        path,
        total,
        cold: { ...cold, rps: coldLoad.requestsPerSecond, ratio: coldRatio },
        warm: { ...warm, rps: warmLoad.requestsPerSecond, ratio: warmRatio },
        later: afterDays,
        bareRps: floor.requestsPerSecond,
      })
    }
    await servers.cold.close()
    await servers.warm.close()
    await servers.later.close()
    console.log(
      `\nQueries: server time from the request log (up to ${SERVER_TIME_SAMPLES} requests one at a time within 10 s),`,
    )
    console.log(
      `and req/s at ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${durationSeconds} s taken in turn with bare node:http sending the same bytes.`,
    )
    console.log(
      'cold: answer cache off, every request runs its query; warm: repeated requests answered from it.',
    )
    console.log(
      `later: cold, ${LATER_DAYS} days after the sync (the same queries from then on: a third of the slots past).`,
    )
    console.log(
      formatTable(
        [
          'query',
          'total',
          'cold p50',
          'cold p99',
          'warm p50',
          'warm p99',
          'later p50',
          'later p99',
          'cold req/s',
          'warm req/s',
          'bare req/s',
          'cold ratio',
          'warm ratio',
          'failed',
          'cold goals',
        ],
        rows,
      ),
    )
    console.log(
      `cold goals (cold and later): p50 < ${P50_GOAL_MS} ms, p99 < ${P99_GOAL_MS} ms, cold >= ${COLD_RPS_GOAL} req/s`,
    )
    console.log(`\nRESULT ${JSON.stringify({ sync, queries: results })}`)
  } finally {
    feed?.stop()
    if (values.keep || reused !== undefined) console.log(`database kept: ${dbPath}`)
    else rmSync(dir as string, { recursive: true, force: true })
  }
}
