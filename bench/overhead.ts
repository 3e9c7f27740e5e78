import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createKey, keyOwnerLookup } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { UsageCounter } from '../src/accounts/usage.js'
import { resolveAppConfig } from '../src/app/config.js'
import { openDatabase, openStore } from '../src/app/store.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import {
  type BareServer,
  formatTable,
  type LoadResult,
  loadTable,
  measure,
  medianOf,
  percentile,
  startBareServer,
  verdict,
} from './lib/load.js'

const CONNECTIONS = 50
const WARMUP_SECONDS = 2
const ROUNDS = 2
const ITERATIONS = 20_000
const WARMUP_ITERATIONS = 2_000
const RATIO_GOAL = 0.5
const MEDIAN_GOAL_US = 50
// The cheapest keyed endpoint: what remains is the cost of the HTTP stack, auth and usage counting.
const PATH = '/v1/scheduling/publishers'

// The scale plan allows 3,000 requests a minute, which bench traffic passes in about a second. Limits are
// only in force from 2026-11-01, so a clock fixed before that date keeps every request counted (the
// reserve transaction still runs) but never refused: the limit-counted path, without 429s.
// Parsed once: the server reads its clock several times a request, and parsing the date each time cost
// about 0.5 µs a request that the real clock (Date.now) does not.
const FIXED_NOW = Date.parse('2026-10-15T12:00:00Z')
const clock = () => FIXED_NOW

function parseDuration(args: string[]): number {
  const { values } = parseArgs({ args, options: { duration: { type: 'string', default: '10' } } })
  const seconds = Number(values.duration)
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`--duration must be a positive number of seconds`)
  return seconds
}

export async function run(args: string[]): Promise<void> {
  const durationSeconds = parseDuration(args)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-overhead-'))
  const dbPath = join(dir, 'svc.db')
  let ours: RunningServer | undefined
  let bare: BareServer | undefined
  try {
    // An empty env so SVC_* variables on this machine do not leak in. (A ./svc.config.json in the working
    // directory would still be read, but db, port and host given here win over it.)
    const config = await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {})
    const setup = openDatabase(dbPath)
    createOrganization(setup, { slug: 'bench', plan: 'scale' })
    const { key } = createKey(setup, { org: 'bench' })
    setup.close()

    ours = await startServer(config, clock)
    const headers = { Authorization: `Bearer ${key}` }
    const sample = await fetch(`${ours.url}${PATH}`, { headers })
    const body = Buffer.from(await sample.arrayBuffer())
    if (sample.status !== 200) throw new Error(`GET ${PATH} answered ${sample.status}: ${body.toString()}`)
    bare = await startBareServer(body, {
      'Content-Type': sample.headers.get('content-type') ?? 'application/json',
    })

    const targets = { ours: `${ours.url}${PATH}`, bare: `${bare.url}${PATH}` }
    const load = (url: string, seconds: number) =>
      measure(url, { connections: CONNECTIONS, durationSeconds: seconds, headers })
    console.log(`Warming up ${WARMUP_SECONDS} s each, then ${ROUNDS} rounds of ${durationSeconds} s each...`)
    await load(targets.ours, WARMUP_SECONDS)
    await load(targets.bare, WARMUP_SECONDS)
    // Alternating spreads slow drift (thermal, other processes) over both sides instead of one.
    const rounds = { ours: [] as LoadResult[], bare: [] as LoadResult[] }
    for (let round = 0; round < ROUNDS; round++) {
      rounds.ours.push(await load(targets.ours, durationSeconds))
      rounds.bare.push(await load(targets.bare, durationSeconds))
    }
    await ours.close()
    ours = undefined
    await bare.close()
    bare = undefined

    const http = { ours: medianOf(rounds.ours), bare: medianOf(rounds.bare) }
    const ratio = http.ours.requestsPerSecond / http.bare.requestsPerSecond

    const inProcess = await timeKeyCheckAndCount(dbPath, key)

    console.log(`\nGET ${PATH}, ${CONNECTIONS} connections, median of ${ROUNDS} x ${durationSeconds} s`)
    console.log(
      loadTable([
        ['ours (koa)', http.ours],
        ['bare node:http', http.bare],
      ]),
    )
    console.log(
      `ratio ours/bare req/s: ${ratio.toFixed(3)} (goal >= ${RATIO_GOAL}: ${verdict(ratio >= RATIO_GOAL)})`,
    )
    if (http.ours.non2xx + http.ours.errors + http.bare.non2xx + http.bare.errors > 0) {
      console.log(
        'WARNING: some requests failed or were not 2xx; the figures above do not measure the intended path.',
      )
    }
    console.log(
      `\nKey check + usage count in-process, ${ITERATIONS} iterations after ${WARMUP_ITERATIONS} warm-up`,
    )
    console.log(
      formatTable(
        ['step', 'median µs', 'p99 µs'],
        [['lookup(key) + reserve()', inProcess.medianUs.toFixed(1), inProcess.p99Us.toFixed(1)]],
      ),
    )
    console.log(`goal median < ${MEDIAN_GOAL_US} µs: ${verdict(inProcess.medianUs < MEDIAN_GOAL_US)}`)

    const result = {
      endpoint: PATH,
      connections: CONNECTIONS,
      durationSeconds,
      rounds: ROUNDS,
      ours: http.ours,
      bare: http.bare,
      ratio,
      ratioGoalMet: ratio >= RATIO_GOAL,
      oursRounds: rounds.ours,
      bareRounds: rounds.bare,
      inProcess: { ...inProcess, goalMet: inProcess.medianUs < MEDIAN_GOAL_US },
    }
    console.log(`\nRESULT ${JSON.stringify(result)}`)
  } finally {
    await ours?.close()
    await bare?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * What authentication and limit counting cost per request without HTTP around them: the same key lookup
 * and usage reserve the middleware runs, on connections of their own. Each iteration runs in an event-loop
 * turn of its own, as a lone request would: the lookup checks the main file for changes once per turn, and
 * a tight loop would hide that. The usage reserve leases as the server does (Scale, before the limits
 * start: blocks of MAX_LEASE), so one iteration in MAX_LEASE pays the lease transaction.
 */
async function timeKeyCheckAndCount(
  dbPath: string,
  key: string,
): Promise<{ iterations: number; medianUs: number; p99Us: number }> {
  const store = openStore({ db: dbPath })
  const usage = new UsageCounter(store.live, clock)
  try {
    const lookup = keyOwnerLookup(store.db)
    const once = () => {
      const owner = lookup(key)
      if (!owner) throw new Error('bench key not found')
      const result = usage.reserve(owner.orgId, owner.plan)
      // Its connection has a busy timeout, so the reserve never waits asynchronously.
      if (result instanceof Promise || !result.ok)
        throw new Error('request refused or waiting; is the clock before the limits?')
    }
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
    for (let i = 0; i < WARMUP_ITERATIONS; i++) {
      await nextTurn()
      once()
    }
    const samples = new Array<number>(ITERATIONS)
    for (let i = 0; i < ITERATIONS; i++) {
      await nextTurn()
      const started = process.hrtime.bigint()
      once()
      samples[i] = Number(process.hrtime.bigint() - started) / 1000
    }
    samples.sort((a, b) => a - b)
    return { iterations: ITERATIONS, medianUs: percentile(samples, 50), p99Us: percentile(samples, 99) }
  } finally {
    await usage.stop()
    store.close()
  }
}
