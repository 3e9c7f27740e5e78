import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { openLiveStore } from '../src/app/store.js'
import { openDatabase } from '../src/app/store.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import { openTopSources } from '../src/stats/topFeed.js'
import { TopReader } from '../src/stats/topSnapshot.js'
import { formatTable, type LoadResult, loadTable, measure, medianOf, verdict } from './lib/load.js'

const CONNECTIONS = 50
const WARMUP_SECONDS = 2
const ROUNDS = 4
const RATIO_GOAL = 0.95
const PATH = '/v1/scheduling/publishers'
const CLI = fileURLToPath(new URL('../bin/run.js', import.meta.url))
// Before 2026-11-01 no limit refuses, so bench traffic is counted but never answered 429 (see overhead.ts).
const NOW = '2026-10-15T12:00:00.000Z'
const clock = () => Date.parse(NOW)
const DAY_MS = 24 * 60 * 60 * 1000
/** Units of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

function parse(args: string[]): { durationSeconds: number; seedRows: number } {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string', default: '10' },
      'seed-rows': { type: 'string', default: '1000000' },
    },
  })
  const durationSeconds = Number(values.duration)
  const seedRows = Number(values['seed-rows'])
  if (!(durationSeconds > 0)) throw new Error('--duration must be a positive number of seconds')
  if (!Number.isInteger(seedRows) || seedRows < 0) throw new Error('--seed-rows must be a whole number')
  return { durationSeconds, seedRows }
}

/** A month of older requests, so the figures show what reading a full request log costs (nothing, by index). */
function seedRequestLog(dbPath: string, rows: number): void {
  const db = openLiveStore({ db: dbPath })
  const insert = db.prepare(
    `INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
     VALUES (?, ?, 1, NULL, 'GET', ?, ?, ?, ?, 512)`,
  )
  const from = clock() - 30 * DAY_MS
  const span = 30 * DAY_MS - 2 * 60 * 60 * 1000
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const status = i % 50 === 0 ? 404 : 200
      insert.run(`seed-${i}`, from + Math.floor((i / rows) * span), PATH, PATH, status, 1 + (i % 7))
    }
  })()
  db.close()
}

/** `svc top` on a pseudo-terminal (util-linux `script`), drawing the live screen every second. */
async function startTop(
  dbPath: string,
): Promise<{ child: ChildProcess; cpuSeconds(): number; stop(): Promise<void> }> {
  const command = `stty cols 120 rows 40; exec node ${JSON.stringify(CLI)} top`
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', SVC_DB: dbPath, SVC_FAKE_NOW: NOW },
  })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    if (output.length < 100_000) output += chunk
  })
  const started = Date.now()
  while (!output.includes('Top organizations')) {
    if (child.exitCode !== null || Date.now() - started > 20_000)
      throw new Error(`svc top did not start: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // `exec` makes node the shell's process: the only child of `script`.
  const pid = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]
  return {
    child,
    cpuSeconds() {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
    },
    async stop() {
      if (child.exitCode !== null) return
      child.stdin?.write('q')
      await once(child, 'exit')
    },
  }
}

/** Time one snapshot read, in milliseconds. */
function timed<T>(read: () => T): [T, number] {
  const started = process.hrtime.bigint()
  const value = read()
  return [value, Number(process.hrtime.bigint() - started) / 1e6]
}

export async function run(args: string[]): Promise<void> {
  const { durationSeconds, seedRows } = parse(args)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-top-'))
  const dbPath = join(dir, 'svc.db')
  let server: RunningServer | undefined
  let top: Awaited<ReturnType<typeof startTop>> | undefined
  try {
    const setup = openDatabase(dbPath)
    createOrganization(setup, { slug: 'bench', plan: 'scale' })
    const { key } = createKey(setup, { org: 'bench' })
    setup.close()
    console.log(`Seeding the request log with ${seedRows.toLocaleString('en-US')} older requests...`)
    seedRequestLog(dbPath, seedRows)

    server = await startServer(await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {}), clock)
    const url = `${server.url}${PATH}`
    const load = (seconds: number) =>
      measure(url, {
        connections: CONNECTIONS,
        durationSeconds: seconds,
        headers: { Authorization: `Bearer ${key}` },
      })

    console.log(
      `Warming up ${WARMUP_SECONDS} s, then ${ROUNDS} rounds of ${durationSeconds} s without and with svc top...`,
    )
    await load(WARMUP_SECONDS)
    const rounds = { without: [] as LoadResult[], with: [] as LoadResult[] }
    let topCpu = 0
    const withTop = async () => {
      top = await startTop(dbPath)
      const cpuBefore = top.cpuSeconds()
      rounds.with.push(await load(durationSeconds))
      topCpu += top.cpuSeconds() - cpuBefore
      await top.stop()
      top = undefined
    }
    const alone = async () => {
      rounds.without.push(await load(durationSeconds))
    }
    // ABBA order: drift over the run (other processes on a shared machine) falls on both sides alike.
    for (let round = 0; round < ROUNDS; round++) {
      for (const step of round % 2 === 0 ? [alone, withTop] : [withTop, alone]) await step()
    }

    // What one refresh costs: the first read of the window, then a later one after a second of traffic.
    const sources = openTopSources(dbPath)
    if (!sources) throw new Error('bench database missing')
    const reader = new TopReader(sources)
    const [first, coldMs] = timed(() => reader.read(clock()))
    await load(1)
    const [next, warmMs] = timed(() => reader.read(clock()))
    const [, idleMs] = timed(() => reader.read(clock()))
    sources.close()

    await server.close()
    server = undefined

    const figures = { without: medianOf(rounds.without), with: medianOf(rounds.with) }
    const ratio = figures.with.requestsPerSecond / figures.without.requestsPerSecond
    console.log(`\nGET ${PATH}, ${CONNECTIONS} connections, median of ${ROUNDS} x ${durationSeconds} s`)
    console.log(
      loadTable([
        ['alone', figures.without],
        ['with svc top', figures.with],
      ]),
    )
    const met = ratio >= RATIO_GOAL
    console.log(`ratio with/without req/s: ${ratio.toFixed(3)} (goal >= ${RATIO_GOAL}: ${verdict(met)})`)
    // Each round's pair ran back to back: a pair far from the others had the machine disturbed under it.
    const roundRatios = rounds.with.map(
      (round, index) => round.requestsPerSecond / (rounds.without[index] as LoadResult).requestsPerSecond,
    )
    console.log(`each round, with/without: ${roundRatios.map((pair) => pair.toFixed(3)).join(' ')}`)
    const cpuShare = topCpu / (ROUNDS * durationSeconds)
    console.log(`svc top CPU while the server was saturated: ${(cpuShare * 100).toFixed(1)}% of one core`)
    console.log(
      `\nOne refresh, request log of ${(seedRows + first.traffic.requests).toLocaleString('en-US')} rows:`,
    )
    console.log(
      formatTable(
        ['read', 'ms', 'requests in window'],
        [
          ['first (window by index)', coldMs.toFixed(1), first.traffic.requests],
          ['after 1 s of load (new rows by rowid)', warmMs.toFixed(1), next.traffic.requests],
          ['nothing new', idleMs.toFixed(1), next.traffic.requests],
        ],
      ),
    )
    const result = {
      endpoint: PATH,
      connections: CONNECTIONS,
      durationSeconds,
      rounds: ROUNDS,
      seedRows,
      without: figures.without,
      with: figures.with,
      ratio,
      ratioGoalMet: met,
      roundRatios,
      topCpuShareOfOneCore: cpuShare,
      refreshMs: { first: coldMs, afterOneSecondOfLoad: warmMs, nothingNew: idleMs },
      windowRequests: { first: first.traffic.requests, afterOneSecondOfLoad: next.traffic.requests },
      withoutRounds: rounds.without,
      withRounds: rounds.with,
    }
    console.log(`\nRESULT ${JSON.stringify(result)}`)
  } finally {
    await top?.stop()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
