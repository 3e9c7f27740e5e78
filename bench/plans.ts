import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { gunzipSync } from 'node:zlib'
import { resolveAppConfig } from '../src/app/config.js'
import { startServer } from '../src/app/server.js'
import { openDatabase } from '../src/app/store.js'
import { importDirectory } from '../src/directory/importer.js'
import { resolveSources } from '../src/ingest/sources.js'
import { packageRoot } from '../src/packageRoot.js'
import { runCliMeasured } from '../test/support/cli.js'
import { measureQueries, unlimitedBenchKey } from './lib/fhirQueries.js'
import { verdict } from './lib/load.js'

/**
 * `npm run bench -- plans [--variants 20000] [--ma 6000] [--duration 2]`: the figures for Plan
 * Benefits. A national-scale set of federal plan files in the real layouts (bench/lib/writePlanFiles.ts:
 * 20,000 ACA plan variants x 80 benefits = 1.6M Benefits and Cost Sharing rows, service areas over every
 * county, 6,000 Medicare Advantage segments) imported by `svc import plans` in a process of its own (rows/s,
 * peak RSS); then, answer cache off, the server time of a read and of searches by county, by state + name
 * and by identifier (p50, p99 from the request log), their req/s at 10 connections against bare node:http
 * sending the same bytes, and `$in-network` for 100 NPIs on the Plan-Net sample directory.
 */

const clock = () => Date.parse('2026-10-15T12:00:00Z')

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
    const key = unlimitedBenchKey(setup)
    await importDirectory(setup, await resolveSources([join(packageRoot(), 'data', 'directory', 'plan-net')]))
    setup.close()
    const server = await startServer(
      await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
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
    await measureQueries(server, key, queries, {
      goals: { read: 1, '$in-network, 100 NPIs': 5 },
      ratioGoal: 0.4,
      durationSeconds: Number(values.duration),
    })
    await server.close()
  } finally {
    if (values.keep) console.log(`Kept ${dbPath}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}
