import { readdirSync, readFileSync, mkdtempSync, rmSync, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { resolveAppConfig } from '../src/app/config.js'
import { startServer } from '../src/app/server.js'
import { openDatabase } from '../src/app/store.js'
import { packageRoot } from '../src/packageRoot.js'
import { runCliMeasured } from '../test/support/cli.js'
import { measureQueries, unlimitedBenchKey } from './lib/fhirQueries.js'

/**
 * `npm run bench -- questionnaires [--count 20000] [--duration 2]`: Questionnaires generated from the curated
 * set (each a curated form under a new canonical, 1 to 4 versions of it, statuses and LOINC codes varied),
 * imported by `svc import questionnaires` in a process of its own (records/s), then, answer cache off, the
 * server time of a read and of searches by `url` (every version, current first), by `url|version` and by
 * `code`, against bare node:http sending the same bytes. Goals: read and canonical search p50 < 1 ms,
 * ratio >= 0.5.
 */

const STATUSES = ['active', 'active', 'draft', 'retired']

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { count: { type: 'string', default: '20000' }, duration: { type: 'string', default: '2' } },
  })
  const count = Number(values.count)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-questionnaires-'))
  const dbPath = join(dir, 'svc.db')
  try {
    const curatedDir = join(packageRoot(), 'data', 'questionnaires')
    const curated = readdirSync(curatedDir)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => JSON.parse(readFileSync(join(curatedDir, name), 'utf8')) as Record<string, unknown>)
    const file = join(dir, 'questionnaires.ndjson')
    const out = createWriteStream(file)
    const canonicals: { url: string; versions: string[]; code: string }[] = []
    for (let written = 0, form = 0; written < count; form++) {
      const base = curated[form % curated.length] as Record<string, unknown>
      const url = `https://forms.example.org/Questionnaire/form-${form}`
      const versions = Array.from({ length: 1 + (form % 4) }, (_, index) => `${1 + index}.${form % 13}.0`)
      const code = String(10_000 + (form % 3000))
      canonicals.push({ url, versions, code })
      for (const [index, version] of versions.entries()) {
        const resource = {
          ...base,
          id: `form-${form}-${index}`,
          url,
          version,
          status: STATUSES[(form + index) % STATUSES.length],
          code: [{ system: 'http://loinc.org', code: `${code}-${index % 10}` }],
        }
        if (!out.write(`${JSON.stringify(resource)}\n`)) await once(out, 'drain')
        if (++written === count) break
      }
    }
    out.end()
    await once(out, 'finish')

    const imported = await runCliMeasured(['import', 'questionnaires', file, '--db', dbPath])
    if (imported.code !== 0) throw new Error(`svc import questionnaires failed: ${imported.stderr}`)
    console.log(
      `Import: ${count.toLocaleString('en-US')} Questionnaires in ${(imported.ms / 1000).toFixed(1)} s = ${Math.round(count / (imported.ms / 1000)).toLocaleString('en-US')} records/s (CLI start included); peak RSS ${imported.peakRssMb.toFixed(0)} MB`,
    )

    const setup = openDatabase(dbPath)
    const key = unlimitedBenchKey(setup)
    setup.close()
    const server = await startServer(
      await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, { SVC_ANSWER_CACHE_MB: '0' }),
      Date.now,
    )
    const base = '/v1/fhir/r4/Questionnaire'
    // Queries nobody asked before: a different form each time, spread over the whole set.
    const spread = Array.from(
      { length: 50 },
      (_, index) => canonicals[Math.floor((index * canonicals.length) / 50)],
    )
    const picked = spread.filter((entry) => entry !== undefined)
    await measureQueries(
      server,
      key,
      [
        [
          'read',
          picked.map(
            (entry, index) => `${base}/form-${canonicals.indexOf(entry)}-${index % entry.versions.length}`,
          ),
        ],
        [
          'search by url (every version)',
          picked.map((entry) => `${base}?url=${encodeURIComponent(entry.url)}`),
        ],
        [
          'search by url|version',
          picked.map((entry) => `${base}?url=${encodeURIComponent(`${entry.url}|${entry.versions.at(-1)}`)}`),
        ],
        ['search by code', picked.map((entry) => `${base}?code=http://loinc.org|${entry.code}-0`)],
      ],
      {
        goals: { read: 1, 'search by url (every version)': 1, 'search by url|version': 1 },
        ratioGoal: 0.5,
        durationSeconds: Number(values.duration),
      },
    )
    await server.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
