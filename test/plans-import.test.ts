import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCost, parseMoney } from '../src/plans/import/costs.js'
import { oneLine, runCli, runCliJson } from './support/cli.js'
import { PLANS } from './support/fixtures.js'
import { zipOf } from './support/zip.js'

/** `svc import plans` as a user runs it: real files, the real process, its output and exit code. */

const ACA = join(PLANS, 'aca')
const ATTRIBUTES = join(ACA, 'plan-attributes.csv')
const SERVICE_AREA = join(ACA, 'service-area.csv')
const BENEFITS = join(ACA, 'constructed', 'benefits-cost-sharing-py2025.csv')
const MA = join(PLANS, 'ma', 'pbp-2027')

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-plans-import-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let stores = 0
const freshDb = () => {
  const folder = join(dir, `store-${++stores}`)
  mkdirSync(folder)
  return join(folder, 'svc.db')
}

/** The partitions served, and every plan's JSON, read from the store as a reader would after the command. */
function served(db: string) {
  const main = new Database(db, { readonly: true })
  try {
    const active = main.prepare("SELECT id, file FROM plans_releases WHERE state = 'active'").get() as
      { id: number; file: string } | undefined
    if (!active) return { partitions: [], plans: new Map<string, any>() }
    const partitions = main
      .prepare(
        'SELECT program, year, name, plans FROM plans_partitions WHERE release = ? ORDER BY program, year',
      )
      .all(active.id)
    const release = new Database(join(db, '..', active.file), { readonly: true })
    const plans = new Map(
      (release.prepare('SELECT id, json FROM plan_resource').all() as { id: string; json: string }[]).map(
        (row) => [row.id, JSON.parse(row.json)],
      ),
    )
    release.close()
    return { partitions, plans }
  } finally {
    main.close()
  }
}

/** A CSV file's lines, its header cut into columns: to write a drifted copy of a real file. */
function table(path: string) {
  const text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '')
  const [header = '', ...rows] = text.split('\r\n').filter((line) => line !== '')
  return { columns: header.split(','), rows }
}

/** Splits one CSV line into fields (quoted fields may hold commas). */
function fields(line: string): string[] {
  return [...line.matchAll(/("([^"]|"")*"|[^,]*)(,|$)/g)].map((match) => match[1] as string).slice(0, -1)
}

describe('svc import plans', () => {
  it('reads the real excerpts by their headers, says what each file gave, and lists each refused row with its file and line', async () => {
    const db = freshDb()
    const result = await runCli(['import', 'plans', ACA, MA, '--db', db])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/plan-attributes\.csv\s+ACA Plan Attributes PUF\s+53\s+14\s+0/)
    expect(result.stdout).toMatch(/service-area\.csv\s+ACA Service Area PUF\s+84\s+14\s+0/)
    expect(result.stdout).toMatch(
      /benefits-cost-sharing-py2025\.csv\s+ACA Benefits and Cost Sharing PUF\s+14\s+1\s+2/,
    )
    expect(result.stdout).toMatch(/PlanArea\.txt\s+Medicare Advantage PBP PlanArea\s+27\s+3\s+0/)
    expect(result.stdout).toMatch(/ACA 2025: 14 plans as release "aca-2025"/)
    expect(result.stdout).toMatch(/Medicare Advantage 2027: 3 plans as release "ma-2027"/)
    expect(result.stderr).toContain(
      `${BENEFITS}:14: PlanId 66252TX9999999-01 has no Plan Attributes row for PY2025; the row is left out`,
    )
    expect(result.stderr).toMatch(
      new RegExp(`${BENEFITS}:15: PlanId "66252TX004000" is not a plan variant id`),
    )
    expect(result.stderr).toContain(
      `${BENEFITS}:12: CopayInnTier1 "See the plan brochure" fits no known cost form; kept as text (note)`,
    )
    // The PY2026 Network file meets PY2025 plans: its rows are left out, said once, and the plans still import.
    expect(result.stderr).toContain(
      `${join(ACA, 'network.csv')}:2: 15 rows of 2026 (from this line on): this import has no ACA Plan Attributes file of that year, so they are left out`,
    )
    expect(result.stderr).toMatch(
      /NetworkId AKN002 of issuer 38344 \(AK\) has no row in a Network file for PY2025/,
    )
    const { partitions } = served(db)
    expect(partitions).toEqual([
      { program: 'ma', year: 2027, name: 'ma-2027', plans: 3 },
      { program: 'qhp', year: 2025, name: 'aca-2025', plans: 14 },
    ])
  })

  it('reads columns by name: reordered columns and unknown extras give the same plans', async () => {
    const { columns, rows } = table(ATTRIBUTES)
    const order = columns.map((_, index) => index).reverse()
    const drifted = [
      ['SomethingNew', ...order.map((index) => columns[index])].join(','),
      ...rows.map((line) => {
        const values = fields(line)
        return ['x', ...order.map((index) => values[index] ?? '')].join(',')
      }),
    ].join('\r\n')
    const folder = join(dir, 'drift')
    mkdirSync(folder)
    writeFileSync(join(folder, 'attributes-2025-renamed.csv'), `${drifted}\r\n`)
    const straight = freshDb()
    const shuffled = freshDb()
    expect((await runCli(['import', 'plans', ATTRIBUTES, SERVICE_AREA, '--db', straight])).code).toBe(0)
    const result = await runCli([
      'import',
      'plans',
      join(folder, 'attributes-2025-renamed.csv'),
      SERVICE_AREA,
      '--db',
      shuffled,
    ])
    expect(result.code, result.stderr).toBe(0)
    const one = served(straight).plans
    const other = served(shuffled).plans
    expect([...other.keys()].sort()).toEqual([...one.keys()].sort())
    const withoutFiles = (plan: any) => ({ ...plan, meta: undefined })
    for (const [id, plan] of one) expect(withoutFiles(other.get(id))).toEqual(withoutFiles(plan))
  })

  it('refuses a benefit row holding a NUL character, with its file and line, and imports the others', async () => {
    const { columns, rows } = table(BENEFITS)
    const explanation = columns.indexOf('Explanation')
    const values = fields(rows[0] as string)
    values[explanation] = 'Covered\u0000in part'
    const folder = join(dir, 'nul')
    mkdirSync(folder)
    const file = join(folder, 'benefits-nul.csv')
    writeFileSync(file, `${[columns.join(','), values.join(','), ...rows.slice(1)].join('\r\n')}\r\n`)
    const db = freshDb()
    const result = await runCli(['import', 'plans', ATTRIBUTES, SERVICE_AREA, file, '--db', db])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`${file}:2: a field holds a NUL character`)
    expect(result.stdout).toMatch(/benefits-nul\.csv\s+ACA Benefits and Cost Sharing PUF\s+14\s+1\s+3/)
    const variant = values[columns.indexOf('PlanId')] as string
    const plan = served(db).plans.get(`${variant.slice(0, 14)}-2025`)
    const benefits = plan.coverage[0].benefit.map((benefit: any) => benefit.type.text)
    expect(benefits).not.toContain(values[columns.indexOf('BenefitName')])
    expect(benefits.length).toBeGreaterThan(0)
  })

  it('refuses a file that lacks a column the mapping needs, naming file, column and layout, and changes nothing', async () => {
    const db = freshDb()
    expect((await runCli(['import', 'plans', ATTRIBUTES, SERVICE_AREA, '--db', db])).code).toBe(0)
    const before = served(db)
    const { columns, rows } = table(ATTRIBUTES)
    const drop = columns.indexOf('NetworkId')
    const missing = join(dir, 'attributes-without-network.csv')
    writeFileSync(
      missing,
      [
        columns.filter((_, index) => index !== drop).join(','),
        ...rows.map((line) =>
          fields(line)
            .filter((_, index) => index !== drop)
            .join(','),
        ),
      ].join('\r\n'),
    )
    const result = await runCli(['import', 'plans', missing, SERVICE_AREA, '--db', db])
    expect(result.code).toBe(2)
    expect(oneLine(result.stderr)).toBe(
      `Error: ${missing}: no column "NetworkId", which the 2025 ACA Plan Attributes PUF layout needs (read by header name: columns may move, not go); nothing changed`,
    )
    expect(served(db)).toEqual(before)
  })

  it('reads zips in place and URLs, and names each plan file by its own name only', async () => {
    const zip = zipOf({
      'PUF/plan-attributes-puf.csv': readFileSync(ATTRIBUTES),
      'PUF/service-area-puf.csv': readFileSync(SERVICE_AREA),
      'README.pdf': 'not a table',
    })
    const zipPath = join(dir, 'puf-2025.zip')
    writeFileSync(zipPath, zip)
    const fromZip = freshDb()
    const zipped = await runCli(['import', 'plans', zipPath, '--db', fromZip])
    expect(zipped.code, zipped.stderr).toBe(0)
    expect(zipped.stdout).toContain(`${zipPath}:PUF/plan-attributes-puf.csv`)
    expect(served(fromZip).plans.size).toBe(14)

    const server = createServer((req, res) => {
      if (req.url?.startsWith('/downloads/puf-2025.zip')) res.writeHead(200).end(zip)
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/downloads/puf-2025.zip?token=secret`
      const fromUrl = freshDb()
      const downloaded = await runCli(['import', 'plans', url, '--db', fromUrl])
      expect(downloaded.code, downloaded.stderr).toBe(0)
      const plan = served(fromUrl).plans.get('38344AK1060002-2025')
      const files = plan.meta.extension
        .filter((e: any) => e.url.endsWith('plan-source-file'))
        .map((e: any) => e.valueString)
      expect(files).toEqual(['puf-2025.zip:plan-attributes-puf.csv', 'puf-2025.zip:service-area-puf.csv'])
      expect(JSON.stringify(plan)).not.toMatch(/127\.0\.0\.1|token|downloads/)
      const missing = await runCli(['import', 'plans', url.replace('puf-2025', 'nothing'), '--db', fromUrl])
      expect(missing.code).toBe(2)
      expect(oneLine(missing.stderr)).toMatch(/nothing\.zip\?token=secret answered HTTP 404/)
    } finally {
      server.close()
    }
  })

  it('reads PBP files as Windows-1252, and asks for --plan-year when a PBP file names no year', async () => {
    const header = readFileSync(join(MA, 'pbp_Section_A.txt'), 'latin1').split('\r\n')[0] as string
    const columns = header.split('\t')
    const row = columns.map(
      (name) =>
        ({
          pbp_a_hnumber: 'H5555',
          pbp_a_plan_identifier: '7',
          segment_id: '0',
          pbp_a_plan_type: '04',
          pbp_a_org_name: 'SALUD PEÑASCO',
          pbp_a_plan_name: 'Año Completo PPO',
        })[name] ?? '',
    )
    const folder = join(dir, 'pbp-undated')
    mkdirSync(folder)
    writeFileSync(
      join(folder, 'pbp_Section_A.txt'),
      Buffer.from(`${header}\r\n${row.join('\t')}\r\n`, 'latin1'),
    )
    const db = freshDb()
    const undated = await runCli(['import', 'plans', folder, '--db', db])
    expect(undated.code).toBe(2)
    expect(oneLine(undated.stderr)).toMatch(
      /pbp_Section_A\.txt: no contract year .* give --plan-year; nothing changed/,
    )
    const dated = await runCli(['import', 'plans', folder, '--plan-year', '2026', '--db', db])
    expect(dated.code, dated.stderr).toBe(0)
    const plan = served(db).plans.get('H5555-007-000-2026')
    expect(plan.name).toBe('Año Completo PPO')
    expect(plan.ownedBy.display).toBe('SALUD PEÑASCO')
    expect(plan.type[0].coding.map((c: any) => c.code)).toEqual(['mediadv', 'ma', 'PPO'])
  })

  it('refuses a bad release name and inputs that hold no plans, changing nothing', async () => {
    const db = freshDb()
    const badName = await runCli(['import', 'plans', ATTRIBUTES, '--release', 'my release', '--db', db])
    expect(badName.code).toBe(2)
    expect(badName.stderr).toMatch(/--release "my release" must be/)
    const noPlans = await runCli(['import', 'plans', SERVICE_AREA, '--db', db])
    expect(noPlans.code).toBe(2)
    expect(noPlans.stderr).toMatch(/hold no plans/)
    const summary = await runCliJson(['import', 'plans', ATTRIBUTES, '--release', 'puf-2025.v2', '--db', db])
    expect(summary.partitions).toEqual([
      { program: 'qhp', year: 2025, release: 'puf-2025.v2', plans: 14, replaced: 0 },
    ])
  })
})

describe('cost strings', () => {
  it.each([
    [
      '$30.00 Copay after deductible',
      { kind: 'copay', value: 30, noCharge: false, qualifiers: ['after deductible'] },
    ],
    ['$1,250.00', { kind: 'copay', value: 1250, noCharge: false, qualifiers: [] }],
    [
      '$950.00 Copay per Stay with deductible',
      { kind: 'copay', value: 950, noCharge: false, qualifiers: ['per stay', 'with deductible'] },
    ],
    ['$N Copay per Day', { kind: 'text', text: '$N Copay per Day' }],
    [
      '20.00% Coinsurance after deductible',
      { kind: 'coinsurance', value: 20, noCharge: false, qualifiers: ['after deductible'] },
    ],
    ['35.00%', { kind: 'coinsurance', value: 35, noCharge: false, qualifiers: [] }],
    [
      'No Charge after deductible',
      { kind: 'copay', value: 0, noCharge: true, qualifiers: ['after deductible'] },
    ],
    ['Not Applicable', { kind: 'none' }],
    ['', { kind: 'none' }],
  ])('%s', (text, expected) => {
    expect(parseCost(text, 'copay')).toEqual(expected)
  })

  it.each([
    ['$9,200', { kind: 'money', value: 9200 }],
    ['$9,100 ', { kind: 'money', value: 9100 }],
    ['$18400 per group', { kind: 'money', value: 18400, per: 'group' }],
    ['$9200 per person', { kind: 'money', value: 9200, per: 'person' }],
    ['per group not applicable', { kind: 'none' }],
    ['ask the issuer', { kind: 'text', text: 'ask the issuer' }],
  ])('money %s', (text, expected) => {
    expect(parseMoney(text)).toEqual(expected)
  })
})
