import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { countyArea, coverageOf, storedCoverage } from '../src/plans/coverage.js'
import { importPlans } from '../src/plans/import/importPlans.js'
import { fixture, importPlanNet } from './support/directory.js'
import { hang, json, startFakeUpstream } from './support/fakeUpstream.js'
import { expectValidR4 } from './support/fhirValidator.js'
import { PLANS } from './support/fixtures.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const BASE = '/v1/fhir/r4'
const ACA = join(PLANS, 'aca')
const MA_2027 = join(PLANS, 'ma', 'pbp-2027')
const MA_2026 = join(PLANS, 'ma', 'constructed', 'pbp-2026')
const BENEFITS = join(ACA, 'constructed', 'benefits-cost-sharing-py2025.csv')
const ACA_FILES = ['plan-attributes.csv', 'service-area.csv', 'network.csv'].map((name) => join(ACA, name))

const ids = (bundle: any): string[] => (bundle.entry ?? []).map((entry: any) => entry.resource.id)

/** A FHIR answer asked with Accept-Encoding gzip, checked gzipped and parsed. */
async function gzippedJson(server: TestServer, path: string): Promise<any> {
  const response = await request(`${server.url}${BASE}/${path}`, {
    headers: { ...bearer(server.key), 'accept-encoding': 'gzip' },
  })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-encoding']).toBe('gzip')
  return JSON.parse(gunzipSync(Buffer.from(await response.body.arrayBuffer())).toString())
}

let t: TestServer
const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importPlanNet(t)
  await importPlans(t.server.db, [...ACA_FILES, BENEFITS, MA_2027, MA_2026], { now: t.now })
}, 60_000)
afterAll(() => t.close())

/** The cost entries of one benefit of one plan variant. */
function costsOf(plan: any, variant: string, benefit: string): any[] {
  const entry = plan.plan.find((p: any) => p.identifier[0].value === variant)
  return entry.specificCost[0].benefit.find((b: any) => b.type.text === benefit).cost
}

describe('InsurancePlan read', () => {
  it('answers what a member pays for a specialist visit in network, from the resource alone', async () => {
    const response = await get('InsurancePlan/66252TX0040009-2025')
    expect(response.status).toBe(200)
    const plan = response.json
    expectValidR4(plan)
    const inNetwork = costsOf(plan, '66252TX0040009-01', 'Specialist Visit').filter(
      (cost: any) => cost.applicability.coding[0].code === 'in-network',
    )
    expect(inNetwork).toEqual([
      {
        type: { text: 'Copay' },
        applicability: {
          coding: [{ system: 'http://terminology.hl7.org/CodeSystem/applicability', code: 'in-network' }],
        },
        qualifiers: [{ text: 'Tier 1' }],
        value: { value: 60, system: 'urn:iso:std:iso:4217', code: 'USD' },
      },
      {
        type: { text: 'Coinsurance' },
        applicability: {
          coding: [{ system: 'http://terminology.hl7.org/CodeSystem/applicability', code: 'in-network' }],
        },
        qualifiers: [{ text: 'Tier 1' }, { text: 'No Charge' }, { text: 'after deductible' }],
        value: { value: 0, system: 'http://unitsofmeasure.org', code: '%' },
      },
    ])
    // The -04 variant (a cost-sharing reduction) has its own costs.
    expect(costsOf(plan, '66252TX0040009-04', 'Specialist Visit')[0].value.value).toBe(20)
  })

  it('reads every cost form into amounts, percents and qualifiers, and keeps an unknown one as text', async () => {
    const plan = (await get('InsurancePlan/66252TX0040009-2025')).json
    const brief = (benefit: string) =>
      costsOf(plan, '66252TX0040009-01', benefit).map((cost: any) => [
        cost.type.text,
        cost.applicability.coding[0].code,
        cost.value?.value,
        (cost.qualifiers ?? []).map((q: any) => q.text).join('; '),
      ])
    // "No Charge" coinsurance beside a copay adds nothing: the copay is the cost.
    expect(brief('Primary Care Visit to Treat an Injury or Illness')).toEqual([
      ['Copay', 'in-network', 30, 'Tier 1; after deductible'],
    ])
    expect(brief('Emergency Room Services')).toEqual([
      ['Copay', 'in-network', 950, 'Tier 1; per stay; with deductible'],
      ['Copay', 'out-of-network', 950, 'per stay; with deductible'],
      ['Coinsurance', 'in-network', 20, 'Tier 1; after deductible'],
      ['Coinsurance', 'out-of-network', 20, 'after deductible'],
    ])
    expect(brief('Skilled Nursing Facility')).toEqual([['Copay', 'in-network', 3000, 'Tier 1; per day']])
    expect(brief('Outpatient Surgery Physician/Surgical Services')).toEqual([
      ['Copay', 'in-network', 2000, 'Tier 1; with deductible'],
      ['Coinsurance', 'in-network', 30, 'Tier 1; after deductible'],
    ])
    expect(brief('Generic Drugs')).toEqual([
      ['Copay', 'in-network', 40, 'Tier 1'],
      ['Copay', 'in-network', 1250, 'Tier 2'],
      ['Coinsurance', 'in-network', 35, 'Tier 2'],
    ])
    expect(brief('Preferred Brand Drugs')).toEqual([['Copay', 'in-network', 40, 'Tier 1; before deductible']])
    expect(brief('Well Baby Visits and Care')).toEqual([
      ['Copay', 'in-network', undefined, 'Tier 1; See the plan brochure'],
      ['Coinsurance', 'in-network', 0, 'Tier 1; No Charge'],
    ])
    const benefits = plan.coverage[0].benefit
    const covered = (name: string) =>
      benefits.find((b: any) => b.type.text === name).extension[0].valueBoolean as boolean
    expect([covered('Specialist Visit'), covered('Chiropractic Care'), covered('Acupuncture')]).toEqual([
      true,
      false,
      false,
    ])
    expect(benefits.find((b: any) => b.type.text === 'Skilled Nursing Facility').limit).toEqual([
      { value: { value: 25, unit: 'Days per Benefit Period' } },
    ])
    expect(benefits.find((b: any) => b.type.text === 'Chiropractic Care').requirement).toBe(
      'Exclusions: Not covered under this plan',
    )
  })

  it('names its release, plan year and source files (by name only), its variants, issuer, network and coverage', async () => {
    const plan = (await get('InsurancePlan/38344AK1060002-2025')).json
    expectValidR4(plan)
    expect(plan.meta.source).toBe('urn:svc:plan-release:aca-2025')
    const extensions = plan.meta.extension.map((e: any) => [
      e.url.split(':').at(-1),
      e.valueString ?? e.valueInteger,
    ])
    expect(extensions).toEqual([
      ['plan-release', 'aca-2025'],
      ['plan-year', 2025],
      ['plan-source-file', 'plan-attributes.csv'],
      ['plan-source-file', 'service-area.csv'],
    ])
    expect(plan.identifier.map((i: any) => i.value)).toEqual(
      expect.arrayContaining(['38344AK1060002', '38344AK1060002-01', '38344AK1060002-06']),
    )
    expect(plan.period).toEqual({ start: '2025-01-01', end: '2025-12-31' })
    expect(plan.ownedBy.identifier.value).toBe('38344')
    expect(plan.coverageArea).toEqual([
      {
        extension: [{ url: 'urn:svc:fhir:StructureDefinition:whole-state', valueBoolean: true }],
        identifier: { system: 'https://www.usps.com/', value: 'AK' },
        display: 'Alaska (whole state)',
      },
    ])
    // Deductibles and out-of-pocket maximums, per variant, "per person" and "per group" kept as said.
    const general = plan.plan[0].generalCost.map((cost: any) => [
      cost.type.text,
      cost.cost?.value,
      cost.comment,
    ])
    expect(general.length).toBeGreaterThan(0)
    expect(
      general.every(([text]: [string]) => /^(Maximum out-of-pocket|Deductible|Coinsurance)/.test(text)),
    ).toBe(true)
  })

  it('builds Medicare Advantage plans from PBP Section A and PlanArea, counties mapped to FIPS', async () => {
    const plan = (await get('InsurancePlan/H1036-068-000-2027')).json
    expectValidR4(plan)
    expect(plan.identifier[0]).toMatchObject({
      system: 'https://www.cms.gov/medicare/ma-plan-id',
      value: 'H1036-068-000',
    })
    expect(plan.name).toBe('Humana Gold Plus H1036-068 (HMO)')
    // One type, as Plan-Net allows: its product type, the program and the plan type.
    expect(plan.type).toHaveLength(1)
    expect(plan.type[0].coding.map((c: any) => c.code)).toEqual(['mediadvhmo', 'ma', 'HMO'])
    expect(plan.meta.profile).toEqual([
      'http://hl7.org/fhir/us/davinci-pdex-plan-net/StructureDefinition/plannet-InsurancePlan|1.2.0',
    ])
    const counties = plan.coverageArea.map((area: any) => area.identifier.value)
    // Duval FL is SSA 10150 in PlanArea, FIPS 12031; St. Johns is 12109.
    expect(counties).toEqual(expect.arrayContaining(['12031', '12109', '12001']))
    expect(plan.coverageArea.find((a: any) => a.identifier.value === '12109').display).toBe(
      'St. Johns County, FL',
    )
    expect(
      (await get('InsurancePlan/H1609-028-000-2027')).json.type[0].coding.slice(2).map((c: any) => c.code),
    ).toEqual(['HMO', 'POS'])
  })

  it('answers 404 for an unknown plan and 400 for an id that is not one', async () => {
    expect((await get('InsurancePlan/nope-2025')).status).toBe(404)
    expect((await get('InsurancePlan/a%20b')).status).toBe(400)
  })
})

describe('InsurancePlan search', () => {
  it('finds by county the plans sold there, whole-state and partial-county plans included, the latter marked', async () => {
    const duval = (await get('InsurancePlan?county=12031&_count=50')).json
    expectValidR4(duval)
    expect(ids(duval)).toEqual(
      expect.arrayContaining([
        '16842FL0120078-2025',
        'H1036-068-000-2027',
        'H1609-028-000-2027',
        'H2406-013-000-2027',
      ]),
    )
    expect(duval.total).toBe(ids(duval).length)
    const hays = (await get('InsurancePlan?county=48209')).json
    expect(ids(hays).sort()).toEqual(['66252TX0010009-2025', '66252TX0040009-2025'])
    for (const entry of hays.entry)
      expect(entry.search.extension).toEqual([
        {
          url: 'urn:svc:fhir:StructureDefinition:partial-county-match',
          extension: [
            { url: 'county', valueString: '48209' },
            { url: 'zipCode', valueString: '78666' },
          ],
        },
      ])
    // A whole-state plan is sold in every county of its state.
    expect(ids((await get('InsurancePlan?county=02020&_count=50')).json)).toContain('38344AK1060002-2025')
    // Asked by a caller that takes gzip (large plans then read as their release keeps them compressed, the
    // text of those the marks may apply to read for them): the same pages.
    for (const [query, expected] of [
      ['county=48209', hays],
      ['county=12031&_count=50', duval],
    ]) {
      const gzipped = await gzippedJson(t, `InsurancePlan?${query}`)
      expect(gzipped).toEqual(expected)
    }
  })

  it('marks partial-county plans in a release file made before they were indexed as such', async () => {
    const old = await startTestServer()
    try {
      await importPlans(old.server.db, [...ACA_FILES, BENEFITS], { now: old.now })
      const name = readdirSync(old.dir).find((file) => /\.plans-\d+\.db$/.test(file)) as string
      const file = new Database(join(old.dir, name))
      expect(file.pragma('user_version', { simple: true })).toBeGreaterThan(0)
      file.pragma('user_version = 0')
      file.prepare("UPDATE plan_token SET system = '' WHERE system = 'partial'").run()
      file.close()
      const hays = await gzippedJson(old, 'InsurancePlan?county=48209')
      expect(hays.entry.map((entry: any) => entry.search.extension?.[0]?.extension)).toEqual([
        [
          { url: 'county', valueString: '48209' },
          { url: 'zipCode', valueString: '78666' },
        ],
        [
          { url: 'county', valueString: '48209' },
          { url: 'zipCode', valueString: '78666' },
        ],
      ])
    } finally {
      await old.close()
    }
  })

  it('finds by identifier (plan or variant, bare or system|value), name forms, state, type, year and issuer', async () => {
    const search = async (query: string) => ids((await get(`InsurancePlan?${query}&_count=50`)).json).sort()
    expect(await search('identifier=66252TX0040009')).toEqual(['66252TX0040009-2025'])
    expect(await search('identifier=66252TX0040009-03')).toEqual(['66252TX0040009-2025'])
    expect(await search('identifier=https://www.cms.gov/medicare/ma-plan-id|H1036-068-000')).toEqual([
      'H1036-068-000-2027',
    ])
    expect(await search('identifier=https://www.cms.gov/medicare/ma-plan-id|66252TX0040009')).toEqual([])
    expect(await search('name=christus')).toEqual(['66252TX0010009-2025', '66252TX0040009-2025'])
    expect(await search('name=silver')).toEqual([])
    expect(await search('name:contains=silv')).toEqual(expect.arrayContaining(['66252TX0040009-2025']))
    expect(await search('name:exact=CHRISTUS%20Silver')).toEqual(['66252TX0040009-2025'])
    expect(await search('name:exact=christus%20silver')).toEqual([])
    expect(await search('state=TX')).toEqual(['66252TX0010009-2025', '66252TX0040009-2025'])
    expect(await search('state=fl&name=humana')).toEqual(['15980FL0160004-2025', 'H1036-068-000-2027'])
    expect(await search('type=MA')).toEqual([
      'H1036-068-000-2027',
      'H1234-001-001-2026',
      'H1234-002-001-2026',
      'H1609-028-000-2027',
      'H2406-013-000-2027',
    ])
    expect(await search('type=pos')).toEqual(['H1609-028-000-2027'])
    expect(await search('plan-year=2026')).toEqual(['H1234-001-001-2026', 'H1234-002-001-2026'])
    expect(await search('owned-by=66252')).toEqual(['66252TX0010009-2025', '66252TX0040009-2025'])
  })

  it('pages with total on every page through opaque cursors', async () => {
    const first = (await get('InsurancePlan?state=FL&_count=3')).json
    expect(first.total).toBe(8)
    const seen = [...ids(first)]
    let next = first.link.find((link: any) => link.relation === 'next')?.url
    while (next) {
      const page = (await t.get(new URL(next).pathname + new URL(next).search, bearer(t.key))).json
      expect(page.total).toBe(8)
      seen.push(...ids(page))
      next = page.link.find((link: any) => link.relation === 'next')?.url
    }
    expect(new Set(seen).size).toBe(8)
    expect(ids((await get('InsurancePlan?state=FL')).json)).toHaveLength(8)
    // Pages that hold every match, or all but one, or exactly all of them: the same total, a next link only
    // when something is left.
    for (const [count, next] of [
      [7, true],
      [8, false],
      [9, false],
    ] as const) {
      const page = (await get(`InsurancePlan?state=FL&_count=${count}`)).json
      expect(page.total).toBe(8)
      expect(ids(page)).toHaveLength(Math.min(count, 8))
      expect(page.link.some((link: any) => link.relation === 'next')).toBe(next)
    }
  })

  it('refuses bad parameters by name, all at once', async () => {
    const response = await get(
      'InsurancePlan?county=1203&type=gold&_count=51&state=XX&name:contains=go&color=red',
    )
    expect(response.status).toBe(400)
    expectValidR4(response.json)
    expect(response.json.issue.flatMap((issue: any) => issue.expression)).toEqual(['color'])
    const values = await get('InsurancePlan?county=1203&type=gold&_count=51&state=XX&name:contains=go')
    expect(values.json.issue.flatMap((issue: any) => issue.expression).sort()).toEqual(
      ['_count', 'county', 'name:contains', 'state', 'type'].sort(),
    )
    const bare = await get('InsurancePlan')
    expect(bare.status).toBe(400)
    expect(bare.json.issue[0].details.text).toBe(
      'A search of InsurancePlan needs one of _id, identifier, name, name:contains, name:exact, state, county, type, plan-year, owned-by or page',
    )
    expect((await get('InsurancePlan?state=FL&state=TX')).status).toBe(400)
  })
})

describe('a cursor across an import', () => {
  it('answers 410 (expired) once the plans changed, and the kept partitions are served as they were', async () => {
    const local = await startTestServer({ plan: 'scale' })
    try {
      await importPlans(local.server.db, [...ACA_FILES, MA_2027], { now: local.now })
      const ma = (await local.get(`${BASE}/InsurancePlan/H1036-068-000-2027`, bearer(local.key))).text
      const first = (await local.get(`${BASE}/InsurancePlan?state=FL&_count=2`, bearer(local.key))).json
      const next = new URL(first.link.find((link: any) => link.relation === 'next').url)
      await importPlans(local.server.db, ACA_FILES, { now: local.now, release: 'aca-2025-fix' })
      const gone = await local.get(next.pathname + next.search, bearer(local.key))
      expect(gone.status).toBe(410)
      expectValidR4(gone.json)
      expect(gone.json.issue[0].code).toBe('expired')
      expect(gone.json.issue[0].details.text).toMatch(/plans changed.*start the search again/)
      // Medicare Advantage 2027 was carried over byte for byte; ACA 2025 carries its new release name.
      expect((await local.get(`${BASE}/InsurancePlan/H1036-068-000-2027`, bearer(local.key))).text).toBe(ma)
      const aca = (await local.get(`${BASE}/InsurancePlan/66252TX0040009-2025`, bearer(local.key))).json
      expect(aca.meta.source).toBe('urn:svc:plan-release:aca-2025-fix')
      const partitions = local.server.db
        .prepare(
          "SELECT program, year, name FROM plans_partitions WHERE release = (SELECT id FROM plans_releases WHERE state = 'active') ORDER BY program",
        )
        .all()
      expect(partitions).toEqual([
        { program: 'ma', year: 2027, name: 'ma-2027' },
        { program: 'qhp', year: 2025, name: 'aca-2025-fix' },
      ])
    } finally {
      await local.close()
    }
  })
})

describe('$in-network', () => {
  /** NPIs the Plan-Net sample lists in network HPID070000 through a PractitionerRole, by practitioner id. */
  const listedInNetwork = () => {
    const roles = fixture('PractitionerRole').filter((role) =>
      (role.extension ?? []).some(
        (e: any) => e.valueReference?.reference === 'Organization/plannet-network-HPID070000',
      ),
    )
    const practitioners = new Map(fixture('Practitioner').map((p) => [p.id, p]))
    return roles.map((role) => ({
      role: `PractitionerRole/${role.id}`,
      npi: practitioners.get(role.practitioner.reference.split('/')[1]).identifier[0].value as string,
    }))
  }

  it("says which NPIs the directory lists in the plan's networks, in order, and by what", async () => {
    const listed = listedInNetwork()
    expect(listed.length).toBeGreaterThan(2)
    const [a, b] = listed as [{ role: string; npi: string }, { role: string; npi: string }]
    const stranger = '1234567890'
    const response = await get(
      `InsurancePlan/H1234-001-001-2026/$in-network?npi=${b.npi},${stranger},${a.npi}`,
    )
    expect(response.status).toBe(200)
    expectValidR4(response.json)
    const results = response.json.parameter.map((result: any) => ({
      npi: result.part[0].valueString,
      status: result.part[1].valueCode,
      by: result.part.slice(2).map((part: any) => part.valueReference.reference),
    }))
    expect(results.map((result: any) => [result.npi, result.status])).toEqual([
      [b.npi, 'listed'],
      [stranger, 'not-listed'],
      [a.npi, 'listed'],
    ])
    expect(results[0].by).toContain(b.role)
    expect(results[1].by).toEqual([])
    // The same through POST, one npi parameter each.
    const posted = await t.send('POST', `${BASE}/InsurancePlan/H1234-001-001-2026/$in-network`, {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Parameters',
        parameter: [b.npi, stranger, a.npi].map((npi) => ({ name: 'npi', valueString: npi })),
      }),
    })
    expect(posted.status).toBe(200)
    expect(posted.json).toEqual(response.json)
  })

  it('lists organizations through their affiliations in the network', async () => {
    const affiliation = fixture('OrganizationAffiliation').find((entry) =>
      (entry.network ?? []).some((n: any) => n.reference === 'Organization/plannet-network-HPID070000'),
    )
    const organization = fixture('Organization').find(
      (org) => `Organization/${org.id}` === affiliation.participatingOrganization.reference,
    )
    const npi = organization.identifier.find((i: any) => i.system === 'http://hl7.org/fhir/sid/us-npi')?.value
    expect(npi).toMatch(/^\d{10}$/)
    const result = (await get(`InsurancePlan/H1234-002-001-2026/$in-network?npi=${npi}`)).json.parameter[0]
    expect(result.part[1].valueCode).toBe('listed')
    expect(result.part.slice(2).map((p: any) => p.valueReference.reference)).toContain(
      `OrganizationAffiliation/${affiliation.id}`,
    )
  })

  it('refuses bad NPIs and lists over 100, answers 404 for an unknown plan', async () => {
    expect((await get('InsurancePlan/H1234-001-001-2026/$in-network?npi=123')).status).toBe(400)
    expect((await get('InsurancePlan/H1234-001-001-2026/$in-network')).status).toBe(400)
    const many = Array.from({ length: 101 }, (_, i) => String(1000000000 + i)).join(',')
    expect((await get(`InsurancePlan/H1234-001-001-2026/$in-network?npi=${many}`)).status).toBe(400)
    expect(
      (await get('InsurancePlan/H1234-001-001-2026/$in-network?npi=1234567890&npi=1234567891')).status,
    ).toBe(400)
    expect((await get('InsurancePlan/H9999-001-001-2026/$in-network?npi=1234567890')).status).toBe(404)
  })

  it('answers 503 not-supported when no directory is imported', async () => {
    const bare = await startTestServer({ plan: 'scale' })
    try {
      await importPlans(bare.server.db, [MA_2026], { now: bare.now })
      const response = await bare.get(
        `${BASE}/InsurancePlan/H1234-001-001-2026/$in-network?npi=1234567890`,
        bearer(bare.key),
      )
      expect(response.status).toBe(503)
      expect(response.json.issue[0].code).toBe('not-supported')
    } finally {
      await bare.close()
    }
  })

  it('follows the upstream rules against a remote directory: retried once, then 502, 503 throttled or 504', async () => {
    const fake = await startFakeUpstream()
    const remote = await startTestServer({
      plan: 'scale',
      env: { SVC_DIRECTORY_URL: fake.base, SVC_DIRECTORY_TIMEOUT_MS: '200' },
      upstream: { sleep: async () => undefined },
    })
    try {
      await importPlans(remote.server.db, [MA_2026], { now: remote.now })
      const ask = () =>
        remote.get(`${BASE}/InsurancePlan/H1234-001-001-2026/$in-network?npi=1234567890`, bearer(remote.key))
      fake.script(
        (_req, res) => res.writeHead(500).end(),
        (_req, res) => res.writeHead(500).end(),
      )
      expect((await ask()).status).toBe(502)
      expect(fake.seen).toHaveLength(2)
      expect(fake.seen[0]?.url).toMatch(/^\/fhir\/InsurancePlan\?identifier=/)

      fake.reset()
      const throttled = json(429, {}, { 'retry-after': '30' })
      fake.script(throttled, throttled)
      const limited = await ask()
      expect(limited.status).toBe(503)
      expect(limited.json.issue[0].code).toBe('throttled')

      fake.reset()
      fake.script(hang, hang)
      expect((await ask()).status).toBe(504)

      fake.reset()
      const empty = { resourceType: 'Bundle', type: 'searchset', entry: [] }
      fake.script(json(200, empty), json(200, empty), json(200, empty))
      const answered = await ask()
      expect(answered.status).toBe(200)
      expect(answered.json.parameter[0].part[1].valueCode).toBe('not-listed')
    } finally {
      await remote.close()
      await fake.close()
    }
  })
})

describe('inside a batch, and in the documents', () => {
  it('reads, searches and asks $in-network in one batch', async () => {
    const entries = [
      'InsurancePlan/66252TX0040009-2025',
      'InsurancePlan?county=48209',
      'InsurancePlan/H1234-001-001-2026/$in-network?npi=1234567890',
      'InsurancePlan/$counties?state=RI',
    ].map((url) => ({ request: { method: 'GET', url } }))
    const response = await t.send('POST', BASE, {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: entries }),
    })
    expect(response.status).toBe(200)
    expectValidR4(response.json)
    expect(response.json.entry.map((entry: any) => entry.response.status)).toEqual([
      '200 OK',
      '200 OK',
      '200 OK',
      '200 OK',
    ])
    expect(response.json.entry[0].resource.id).toBe('66252TX0040009-2025')
    expect(response.json.entry[1].resource.total).toBe(2)
  })

  it('lists InsurancePlan read, search (modifiers under their parameter) and $in-network', async () => {
    const capability = (await get('metadata')).json
    const insurancePlan = capability.rest[0].resource.find((r: any) => r.type === 'InsurancePlan')
    expect(insurancePlan.interaction.map((i: any) => i.code).sort()).toEqual(['read', 'search-type'])
    const names = insurancePlan.searchParam.map((p: any) => p.name)
    expect(names).toEqual(
      expect.arrayContaining([
        '_id',
        'identifier',
        'name',
        'state',
        'county',
        'type',
        'plan-year',
        'owned-by',
      ]),
    )
    expect(names).not.toContain('name:contains')
    expect(names).not.toContain('_partition')
    expect(insurancePlan.operation.map((o: any) => o.name)).toEqual(
      expect.arrayContaining(['counties', 'in-network']),
    )
    const openapi = (await t.get('/openapi.json')).json
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        `${BASE}/InsurancePlan`,
        `${BASE}/InsurancePlan/{id}`,
        `${BASE}/InsurancePlan/{id}/$in-network`,
      ]),
    )
    expect(openapi.paths[`${BASE}/InsurancePlan`].get.parameters.map((p: any) => p.name)).not.toContain(
      '_partition',
    )
  })
})

describe("a stored plan's coverage, read for the county marks", () => {
  const partial = countyArea({ fips: '12031', name: 'Duval County', state: 'FL' }, { zips: ['32202'] })
  const whole = countyArea({ fips: '12089', name: 'Nassau County', state: 'FL' })
  const read = (members: Record<string, unknown>) => storedCoverage(Buffer.from(JSON.stringify(members)))

  it('reads the same wherever the plan goes on after it, and whatever its strings hold', () => {
    const expected = coverageOf({ coverageArea: [partial, whole] })
    expect(expected.counties.get('12031')).toEqual({ partial: true, zips: ['32202'] })
    // As our plans write it (network next), with contact first, and with neither (found by depth).
    expect(read({ id: 'a', coverageArea: [partial, whole], network: [{ display: 'n' }] })).toEqual(expected)
    expect(read({ coverageArea: [partial, whole], contact: [], network: [] })).toEqual(expected)
    expect(read({ coverageArea: [partial, whole], name: 'x' })).toEqual(expected)
    // A display holding what our plans write next does not cut it short.
    const tricky = { ...whole, display: 'Nassau ],"network":[ County, FL' }
    expect(read({ coverageArea: [partial, tricky], network: [] }).counties.get('12089')).toEqual({
      partial: false,
      zips: [],
    })
  })
})
