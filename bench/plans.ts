import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { gunzipSync } from 'node:zlib'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import { openDatabase } from '../src/app/store.js'
import { importDirectory } from '../src/directory/importer.js'
import { resolveSources } from '../src/ingest/sources.js'
import { packageRoot } from '../src/packageRoot.js'
import { runCliMeasured } from '../test/support/cli.js'
import {
  formatTable,
  type LoadResult,
  measure,
  medianOf,
  percentile,
  startBareServer,
  verdict,
} from './lib/load.js'

/**
 * `npm run bench -- plans [--variants 20000] [--ma 6000] [--duration 2]`: the figures for Plan
 * Benefits. A national-scale set of federal plan files in the real layouts (bench/lib/writePlanFiles.ts:
 * 20,000 ACA plan variants x 80 benefits = 1.6M Benefits and Cost Sharing rows, service areas over every
 * county, 6,000 Medicare Advantage segments) imported by `svc import plans` in a process of its own (rows/s,
 * peak RSS); then, answer cache off, the server time of a read and of searches by county, by state + name
 * and by identifier (p50, p99 from the request log), their req/s at 10 connections against bare node:http
 * sending the same bytes, and `$in-network` for 100 NPIs on the Plan-Net sample directory.
 */

const CONNECTIONS = 10
const ROUNDS = 3
const SAMPLES = 200
const clock = () => Date.parse('2026-10-15T12:00:00Z')

async function serverTimes(server: RunningServer, key: string, paths: readonly string[]) {
  await server.flush()
  const after = server.live.prepare('SELECT coalesce(max(rowid), 0) FROM request_log').pluck().get()
  for (let sent = 0; sent < SAMPLES; sent++) {
    const response = await fetch(`${server.url}${paths[sent % paths.length]}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${paths[sent % paths.length]}: ${response.status}`)
  }
  await server.flush()
  const times = server.live
    .prepare('SELECT duration_ms FROM request_log WHERE rowid > ? AND status = 200 ORDER BY duration_ms')
    .pluck()
    .all(after) as number[]
  return { p50: percentile(times, 50), p99: percentile(times, 99) }
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      variants: { type: 'string', default: '20000' },
      ma: { type: 'string', default: '6000' },
      duration: { type: 'string', default: '2' },
      keep: { type: 'boolean', default: false },
    },
  })
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-plans-'))
  const input = join(dir, 'input')
  mkdirSync(input)
  const dbPath = join(dir, 'svc.db')
  try {
    console.log(`Generating ${values.variants} ACA plan variants and ${values.ma} MA plans into ${input}`)
    const shape = JSON.parse(
      execFileSync(
        process.execPath,
        [
          ...process.execArgv,
          fileURLToPath(new URL('./lib/writePlanFiles.ts', import.meta.url)),
          input,
          String(values.variants),
          String(values.ma),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      ),
    ) as { rows: number; benefitRows: number; plans: number; variants: number; maPlans: number }
    console.log(JSON.stringify(shape))

    const imported = await runCliMeasured(['import', 'plans', input, '--db', dbPath, '--json'])
    if (imported.code !== 0) throw new Error(`svc import plans failed: ${imported.stderr}`)
    const summary = JSON.parse(imported.stdout) as { partitions: { plans: number }[]; refused: number }
    const seconds = imported.ms / 1000
    const rowsPerSecond = shape.rows / seconds
    console.log(
      `\nImport: ${shape.rows.toLocaleString('en-US')} rows (${shape.benefitRows.toLocaleString('en-US')} benefit rows) in ${seconds.toFixed(1)} s = ${Math.round(rowsPerSecond).toLocaleString('en-US')} rows/s (goal >= 100,000: ${verdict(rowsPerSecond >= 100_000)})`,
    )
    console.log(
      `Peak RSS: ${imported.peakRssMb.toFixed(0)} MB (goal < 400 MB: ${verdict(imported.peakRssMb < 400)}); plans: ${summary.partitions.map((p) => p.plans).join(' + ')}; ${summary.refused} rows refused`,
    )

    const setup = openDatabase(dbPath)
    createOrganization(setup, { slug: 'bench', plan: 'scale' })
    const { key } = createKey(setup, { org: 'bench' })
    await importDirectory(setup, await resolveSources([join(packageRoot(), 'data', 'directory', 'plan-net')]))
    setup.close()
    const server = await startServer(
      resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
      clock,
    )
    const headers = { authorization: `Bearer ${key}` }
    const get = async (path: string) => {
      const response = await fetch(`${server.url}${path}`, { headers })
      const body = Buffer.from(await response.arrayBuffer())
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body}`)
      return {
        body,
        json: JSON.parse(body.toString()),
        contentType: response.headers.get('content-type') ?? '',
      }
    }
    const base = '/v1/fhir/r4/InsurancePlan'
    // Queries nobody asked before: a different county, state, plan each time (the answer cache is off too).
    const planIds = (await get(`${base}?type=qhp&_count=50`)).json.entry.map(
      (e: any) => e.resource.id,
    ) as string[]
    // Counties some plan serves, spread over the generated Service Area file (a county nobody serves
    // would measure an empty answer).
    const servedCounties = [
      ...new Set(
        readFileSync(join(input, 'service-area-puf.csv'), 'utf8')
          .split('\n')
          .map((line) => line.split(',')[8] ?? '')
          .filter((fips) => /^\d{5}$/.test(fips)),
      ),
    ]
    const counties = Array.from(
      { length: 10 },
      (_, index) => servedCounties[Math.floor((index * servedCounties.length) / 10)] as string,
    )
    const states = ['TX', 'CA', 'FL', 'NY', 'OH', 'PA', 'IL', 'GA', 'NC', 'MI']
    const identifiers = planIds.map((id) => id.replace(/-\d{4}$/, ''))
    // 100 NPIs: the sample directory's practitioners (some listed in the plan's network, most not) and strangers.
    const practitioners = gunzipSync(
      readFileSync(join(packageRoot(), 'data', 'directory', 'plan-net', 'Practitioner.ndjson.gz')),
    )
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).identifier?.[0]?.value as string)
    const npis = Array.from({ length: 100 }, (_, index) =>
      index % 2 === 0
        ? (practitioners[index % practitioners.length] as string)
        : String(1_230_000_000 + index * 97),
    )
    const queries: [string, string[]][] = [
      ['read', planIds.map((id) => `${base}/${id}`)],
      ['search by county', counties.map((county) => `${base}?county=${county}`)],
      [
        'search by state + name',
        states.map(
          (state, index) =>
            `${base}?state=${state}&name=${['blue', 'summit', 'river', 'liberty', 'harbor'][index % 5]}`,
        ),
      ],
      ['search by identifier', identifiers.map((identifier) => `${base}?identifier=${identifier}`)],
      ['$in-network, 100 NPIs', [`${base}/H1234-001-001-2027/$in-network?npi=${npis.join(',')}`]],
    ]
    const goals: Record<string, number> = { read: 1, '$in-network, 100 NPIs': 5 }
    const rows: (string | number)[][] = []
    for (const [label, paths] of queries) {
      const times = await serverTimes(server, key, paths)
      const sample = await get(paths[0] as string)
      const bare = await startBareServer(sample.body, { 'Content-Type': sample.contentType })
      const rounds = { ours: [] as LoadResult[], bare: [] as LoadResult[] }
      for (let round = 0; round < ROUNDS; round++) {
        rounds.ours.push(
          await measure(`${server.url}${paths[0]}`, {
            connections: CONNECTIONS,
            durationSeconds: Number(values.duration),
            headers,
          }),
        )
        rounds.bare.push(
          await measure(`${bare.url}${paths[0]}`, {
            connections: CONNECTIONS,
            durationSeconds: Number(values.duration),
          }),
        )
      }
      await bare.close()
      const ours = medianOf(rounds.ours)
      const floor = medianOf(rounds.bare)
      const ratio = ours.requestsPerSecond / floor.requestsPerSecond
      const goal = goals[label] ?? 2
      rows.push([
        label,
        sample.body.length,
        times.p50.toFixed(2),
        times.p99.toFixed(2),
        Math.round(ours.requestsPerSecond),
        Math.round(floor.requestsPerSecond),
        ratio.toFixed(2),
        `p50 < ${goal} ms: ${verdict(times.p50 < goal)}; p99 < 20 ms: ${verdict(times.p99 < 20)}; ratio >= 0.4: ${verdict(ratio >= 0.4)}`,
      ])
    }
    await server.close()
    console.log(
      `\nAnswer cache off; server time from the request log (${SAMPLES} requests one at a time, a different query each), req/s at ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${values.duration} s taken in turn with bare node:http sending the same bytes.`,
    )
    console.log(
      formatTable(['query', 'bytes', 'p50 ms', 'p99 ms', 'req/s', 'bare req/s', 'ratio', 'goals'], rows),
    )
  } finally {
    if (values.keep) console.log(`Kept ${dbPath}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}
