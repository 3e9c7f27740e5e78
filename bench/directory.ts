import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { openDatabase } from '../src/app/store.js'
import { importDirectory } from '../src/directory/importer.js'
import { resolveSources } from '../src/ingest/sources.js'
import { startServer } from '../src/app/server.js'
import {
  type DirectoryScale,
  generatedRelease,
  NATIONAL,
  NETWORKS,
  npiOf,
  pools,
} from './lib/directoryData.js'
import { formatTable, percentile, startBareAnswers, verdict } from './lib/load.js'

const PLAN_NET = fileURLToPath(new URL('../test/fixtures/directory/plan-net', import.meta.url))
const IMPORT_GOAL = 50_000
const RSS_GOAL_MB = 400
const QUERIES = 400
/** Requests of each query kind before any is timed (see the warm-up below). */
const WARM_UP_REQUESTS = 1000
/** Issue 13: svc's own time (p50 minus the bare floor's) for reads and token searches, and for name searches and _include. */
const READ_OWN_GOAL_MS = 0.2
const NAME_OWN_GOAL_MS = 0.5

interface Timed {
  label: string
  p50: number
  p99: number
  bareP50?: number
  ownGoal?: number
}

// Limits are in force from 2026-11-01: a clock before it counts every request but never refuses one.
const clock = () => Date.parse('2026-10-15T12:00:00Z')

function scaled(factor: number): DirectoryScale {
  const of = (n: number) => Math.max(NETWORKS * 2, Math.round(n * factor))
  return {
    practitioners: of(NATIONAL.practitioners),
    roles: of(NATIONAL.roles),
    organizations: of(NATIONAL.organizations),
    locations: of(NATIONAL.locations),
    affiliations: of(NATIONAL.affiliations),
  }
}

/**
 * Import speed, peak RSS and database size for a generated national-size release, then sequential query
 * latency over loopback HTTP for the directory's hot searches, against the cheapest keyed endpoint as floor.
 * The release is written to NDJSON files first and imported from them, as `svc import directory <dir>` does;
 * `--source stream` imports the generator's streams instead, its CPU then counting in the import's.
 * Usage: npm run bench -- directory [--scale 1] [--queries 400] [--source files|stream] [--keep]
 */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      scale: { type: 'string', default: '1' },
      queries: { type: 'string', default: String(QUERIES) },
      source: { type: 'string', default: 'files' },
      keep: { type: 'boolean', default: false },
    },
  })
  if (values.source !== 'files' && values.source !== 'stream') throw new Error('--source is files or stream')
  const scale = scaled(Number(values.scale))
  const queries = Number(values.queries)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-directory-'))
  const dbPath = join(dir, 'svc.db')
  let sources = generatedRelease(PLAN_NET, scale)
  if (values.source === 'files') {
    const input = join(dir, 'input')
    console.log(`Generating ${JSON.stringify(scale)} into ${input}`)
    // In a process of its own (the loader flags tsx runs this one with included): the generator's garbage
    // stays out of the import's RSS.
    execFileSync(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(new URL('./lib/writeDirectoryFiles.ts', import.meta.url)),
        input,
        JSON.stringify(scale),
      ],
      { stdio: 'inherit' },
    )
    sources = await resolveSources([input])
  }
  console.log(`Importing into ${dbPath}`)

  const db = openDatabase(dbPath)
  const rssBefore = process.memoryUsage().rss
  let peakRss = rssBefore
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }, 100)
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const summary = await importDirectory(db, sources, {
    onProgress: ({ records }) => {
      if (records % 500_000 === 0)
        console.log(
          `  ${records.toLocaleString('en-US')} records, ${((performance.now() - started) / 1000).toFixed(0)} s`,
        )
    },
  })
  const seconds = (performance.now() - started) / 1000
  // CPU seconds of every thread of the process (generator included with --source stream): steadier than wall
  // time on a shared machine.
  const cpu = process.cpuUsage(cpuBefore)
  clearInterval(sampler)
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024)
  createOrganization(db, { slug: 'bench', name: 'Bench', plan: 'scale' })
  const { key } = createKey(db, { org: 'bench' })
  db.close()
  // The main file, its WAL and the release file; the input and the live file's few pages are not counted.
  const dbBytes = readdirSync(dir)
    .filter((name) => name.startsWith('svc.') && !name.startsWith('svc.live') && !name.endsWith('-shm'))
    .reduce((bytes, name) => bytes + statSync(join(dir, name)).size, 0)
  const rate = summary.imported / seconds

  // Answer cache off: every request runs its query (issue 13's FHIR path figures are cold).
  const server = await startServer(
    await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
    clock,
  )
  const headers = { authorization: `Bearer ${key}` }
  const fetchBytes = async (path: string) => {
    const response = await request(`${server.url}${path}`, { headers })
    const bytes = Buffer.from(await response.body.arrayBuffer())
    if (response.statusCode !== 200)
      throw new Error(`${path} answered ${response.statusCode}: ${bytes.toString().slice(0, 300)}`)
    return { bytes, type: String(response.headers['content-type']) }
  }
  const call = async (path: string) => JSON.parse((await fetchBytes(path)).bytes.toString())
  // The floor svc's own time is measured against: node:http answering each path with the bytes svc gave.
  const answers = new Map<string, { bytes: Buffer; type: string }>()
  const bare = await startBareAnswers(answers)
  const { families, givens } = pools(PLAN_NET)
  let seed = 7
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  interface Query {
    label: string
    makePath: () => string
    ownGoal?: number
  }
  const query = (label: string, makePath: () => string, ownGoal?: number): Query => ({
    label,
    makePath,
    ownGoal,
  })
  /**
   * Each path is asked of svc, then at once of node:http with the bytes svc gave: taking all of svc's then all
   * of bare's (as this bench did) gave bare a client warmer by hundreds of requests.
   */
  const timed = async ({ label, makePath, ownGoal }: Query): Promise<Timed> => {
    const times: number[] = []
    const bareTimes: number[] = []
    for (const path of Array.from({ length: queries }, makePath)) {
      let start = performance.now()
      answers.set(path, await fetchBytes(path))
      times.push(performance.now() - start)
      start = performance.now()
      await (await request(`${bare.url}${path}`)).body.arrayBuffer()
      bareTimes.push(performance.now() - start)
      answers.delete(path)
    }
    times.sort((a, b) => a - b)
    bareTimes.sort((a, b) => a - b)
    return {
      label,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      bareP50: percentile(bareTimes, 50),
      ownGoal,
    }
  }
  const base = '/v1/fhir/r4'
  const asked: Query[] = [
    query('floor: GET /v1/scheduling/publishers', () => '/v1/scheduling/publishers'),
    query(
      'Practitioner/<id> (read)',
      () => `${base}/Practitioner/gen-practitioner-${next(scale.practitioners)}`,
      READ_OWN_GOAL_MS,
    ),
    query(
      'Practitioner?identifier=<npi>',
      () => `${base}/Practitioner?identifier=${npiOf(next(scale.practitioners))}`,
      READ_OWN_GOAL_MS,
    ),
    query(
      'Practitioner?name=<given> <family>',
      () =>
        `${base}/Practitioner?name=${encodeURIComponent(`${givens[next(givens.length)]} ${families[next(families.length)]}`)}`,
      NAME_OWN_GOAL_MS,
    ),
    query(
      'Practitioner?family=<3-letter prefix>',
      () => `${base}/Practitioner?family=${(families[next(families.length)] as string).slice(0, 3)}`,
      NAME_OWN_GOAL_MS,
    ),
    query(
      'Practitioner?identifier&_include=roles',
      () =>
        `${base}/Practitioner?identifier=${npiOf(next(scale.practitioners))}&_include=PractitionerRole:practitioner`,
      NAME_OWN_GOAL_MS,
    ),
    query(
      'Practitioner?family&_include=roles (_count=10)',
      () =>
        `${base}/Practitioner?family=${families[next(families.length)]}&_include=PractitionerRole:practitioner`,
      NAME_OWN_GOAL_MS,
    ),
    query(
      'OrganizationAffiliation network membership',
      () =>
        `${base}/OrganizationAffiliation?network=gen-org-${next(NETWORKS)}&participating-organization=gen-org-${NETWORKS + next(scale.organizations - NETWORKS)}`,
      READ_OWN_GOAL_MS,
    ),
    query(
      'OrganizationAffiliation?network&_include (_count=100)',
      () =>
        `${base}/OrganizationAffiliation?network=gen-org-${next(NETWORKS)}&_count=100&_include=OrganizationAffiliation:participating-organization`,
      NAME_OWN_GOAL_MS,
    ),
    // The matches name few primary organizations between them: each is read once, however many name it.
    query(
      'OrganizationAffiliation?network&_include=primary (_count=100)',
      () =>
        `${base}/OrganizationAffiliation?network=gen-org-${next(NETWORKS)}&_count=100&_include=OrganizationAffiliation:primary-organization`,
      NAME_OWN_GOAL_MS,
    ),
  ]
  // A server runs for days: every query's code is compiled (in svc and in this client) before any is timed,
  // on requests of their own. Timed right after 50 requests of their kind (as this bench did), a read's own
  // time read 0.25 ms where it is 0.13 (README, Provider directory).
  for (const { makePath } of asked) for (let i = 0; i < WARM_UP_REQUESTS; i++) await call(makePath())
  const results: Timed[] = []
  for (const one of asked) results.push(await timed(one))
  // Deep paging: follow next links of one network's affiliations, timing each page far from the start.
  const deep: number[] = []
  let path: string | undefined = `${base}/OrganizationAffiliation?network=gen-org-0&_count=100`
  let pages = 0
  while (path && pages < Math.max(50, queries / 4)) {
    const start = performance.now()
    const bundle = await call(path)
    deep.push(performance.now() - start)
    pages++
    path = bundle.link
      .find((link: { relation: string }) => link.relation === 'next')
      ?.url?.replace(server.url, '')
  }
  deep.sort((a, b) => a - b)
  results.push({
    label: `deep paging, ${pages} pages of 100 via cursors`,
    p50: percentile(deep, 50),
    p99: percentile(deep, 99),
  })
  await server.close()
  await bare.close()

  const floor = results[0]?.p50 ?? Number.NaN
  console.log(
    `\nImport: ${summary.imported.toLocaleString('en-US')} resources in ${seconds.toFixed(1)} s = ${Math.round(rate).toLocaleString('en-US')}/s (goal >= ${IMPORT_GOAL.toLocaleString('en-US')}/s: ${verdict(rate >= IMPORT_GOAL)})`,
  )
  console.log(
    `Import CPU: ${(cpu.user / 1e6).toFixed(1)} s user + ${(cpu.system / 1e6).toFixed(1)} s system (${((cpu.user + cpu.system) / 1e6 / seconds).toFixed(2)} cores busy on average)`,
  )
  console.log(
    `Peak RSS: ${(peakRss / 1048576).toFixed(0)} MB (goal < ${RSS_GOAL_MB} MB: ${verdict(peakRss / 1048576 < RSS_GOAL_MB)}), started at ${(rssBefore / 1048576).toFixed(0)} MB`,
  )
  console.log(
    `Database: ${(dbBytes / 1073741824).toFixed(2)} GiB (${Math.round(dbBytes / summary.imported)} bytes a resource)\n`,
  )
  console.log(
    'Sequential requests over one keep-alive loopback connection, answer cache off; "own" is svc p50 minus the p50 of node:http sending the same bytes for the same paths to the same client (issue 13: < 0.2 ms for reads and token searches, < 0.5 ms for name searches and _include).',
  )
  console.log(
    formatTable(
      ['query', 'p50 ms', 'p99 ms', 'p50 / floor', 'bare p50', 'own ms', 'own goal'],
      results.map((r) => {
        const own = r.bareP50 === undefined ? undefined : r.p50 - r.bareP50
        return [
          r.label,
          r.p50.toFixed(2),
          r.p99.toFixed(2),
          (r.p50 / floor).toFixed(1),
          r.bareP50?.toFixed(2) ?? '',
          own?.toFixed(2) ?? '',
          own === undefined || r.ownGoal === undefined ? '' : `< ${r.ownGoal}: ${verdict(own < r.ownGoal)}`,
        ]
      }),
    ),
  )
  const identifier = results[2]?.p50 ?? Number.NaN
  const name = results[3]?.p50 ?? Number.NaN
  console.log(
    `\nidentifier search p50 < 1 ms: ${verdict(identifier < 1)}; name search p50 < 5 ms: ${verdict(name < 5)}`,
  )
  if (values.keep) console.log(`Kept ${dbPath}`)
  else rmSync(dir, { recursive: true, force: true })
}
