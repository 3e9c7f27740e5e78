import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RELEASE_FORMAT } from '../src/fhir/store/schema.js'
import { runCli } from './support/cli.js'
import { fixture, importPlanNet } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

let t: TestServer
const BASE = '/v1/fhir/r4'
const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))
const ids = (bundle: any, mode = 'match') =>
  (bundle.entry ?? [])
    .filter((entry: any) => entry.search.mode === mode)
    .map((entry: any) => entry.resource.id)
const expressions = (outcome: any) => outcome.issue.map((issue: any) => issue.expression?.[0]).sort()
const next = (bundle: any) =>
  bundle.link.find((link: any) => link.relation === 'next')?.url as string | undefined

const practitioners = fixture('Practitioner')
const affiliations = fixture('OrganizationAffiliation')
const NETWORK = 'plannet-network-HPID010000'
const inNetwork = affiliations.filter((a) =>
  a.network?.some((n: any) => n.reference === `Organization/${NETWORK}`),
)

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importPlanNet(t)
})
afterAll(() => t.close())

describe('Practitioner', () => {
  const sample = practitioners[0]
  const npi = sample.identifier[0].value as string

  it('finds one NPI bare or in any of the three accepted systems, answering in the indexed system, without total', async () => {
    for (const value of [
      npi,
      `http://hl7.org/fhir/sid/us-npi|${npi}`,
      `http://terminology.hl7.org/NamingSystem/npi|${npi}`,
      `urn:oid:2.16.840.1.113883.4.6|${npi}`,
    ]) {
      const response = await get(`Practitioner?identifier=${encodeURIComponent(value)}`)
      expect(response.status).toBe(200)
      expect(response.json).toMatchObject({ resourceType: 'Bundle', type: 'searchset' })
      expect(response.json.total).toBeUndefined()
      expect(ids(response.json)).toEqual([sample.id])
      expect(response.json.entry[0].resource.identifier[0].system).toBe('http://hl7.org/fhir/sid/us-npi')
      expect(response.json.entry[0].fullUrl).toBe(`${t.url}${BASE}/Practitioner/${sample.id}`)
      expect(response.json.link[0]).toEqual({
        relation: 'self',
        url: `${t.url}${BASE}/Practitioner?identifier=${encodeURIComponent(value)}`,
      })
    }
    expect(ids((await get('Practitioner?identifier=0000000000')).json)).toEqual([])
  })

  it('refuses other systems by name, several NPIs, malformed NPIs and repeats', async () => {
    const other = await get(`Practitioner?identifier=${encodeURIComponent(`http://example.org/ids|${npi}`)}`)
    expect(other.status).toBe(400)
    expect(other.json.issue[0]).toMatchObject({ code: 'invalid', expression: ['identifier'] })
    expect(other.json.issue[0].details.text).toContain('http://example.org/ids')
    expect((await get(`Practitioner?identifier=${npi},1234567893`)).json.issue[0].details.text).toMatch(
      /one NPI per search/,
    )
    expect((await get('Practitioner?identifier=12345')).status).toBe(400)
    const twice = await get(`Practitioner?identifier=${npi}&identifier=${npi}`)
    expect(twice.status).toBe(400)
    expect(expressions(twice.json)).toEqual(['identifier'])
  })

  it('matches names word by word as prefixes, ignoring case and accents', async () => {
    const family = sample.name[0].family as string
    const given = sample.name[0].given[0] as string
    const expected = practitioners
      .filter((p) =>
        p.name.some((n: any) => n.family.toLowerCase().startsWith(family.slice(0, 3).toLowerCase())),
      )
      .map((p) => p.id)
    const byFamily = await get(`Practitioner?family=${family.slice(0, 3).toUpperCase()}&_count=100`)
    expect(ids(byFamily.json).sort()).toEqual(expected.sort())
    const accented = family.replace(/o/, 'ö').replace(/e/, 'é').replace(/a/, 'á')
    const whole = await get(
      `Practitioner?name=${encodeURIComponent(`${given.slice(0, 3)} ${accented.toLowerCase()}`)}`,
    )
    expect(ids(whole.json)).toContain(sample.id)
    expect(
      (await get(`Practitioner?given=${given.toLowerCase()}&family=${family}`)).json.entry.length,
    ).toBeGreaterThan(0)
    expect(ids((await get('Practitioner?name=zzzzqqq')).json)).toEqual([])
  })

  it('finds a name by each of its prefixes, whether the text index keeps that length of prefix or not', async () => {
    // FTS5 reads prefixes of 2 to 8 characters from a prefix index and longer ones by merging terms: both
    // ways must find the same names.
    const long = practitioners
      .map((p) => p.name[0].family as string)
      .filter((family) => /^[a-z]{11,}$/i.test(family))
      .sort()[0] as string
    expect(long).toBeDefined()
    for (let length = 2; length <= long.length; length++) {
      const prefix = long.slice(0, length).toLowerCase()
      const expected = practitioners
        .filter((p) =>
          p.name.some((n: any) =>
            String(n.family)
              .toLowerCase()
              .split(/[^a-z0-9]+/)
              .some((word) => word.startsWith(prefix)),
          ),
        )
        .map((p) => p.id)
      const found = await get(`Practitioner?family=${prefix}&_count=100`)
      expect(next(found.json), prefix).toBeUndefined()
      expect(ids(found.json).sort(), prefix).toEqual(expected.sort())
    }
  })

  it('narrows a name search by address city and state, which cannot stand alone', async () => {
    const family = sample.name[0].family as string
    const city = sample.address[0].city as string
    const narrowed = await get(
      `Practitioner?family=${family}&address-city=${encodeURIComponent(city.toLowerCase())}&address-state=${sample.address[0].state}`,
    )
    expect(ids(narrowed.json)).toContain(sample.id)
    for (const entry of narrowed.json.entry) expect(entry.resource.address[0].city).toBe(city)
    expect(ids((await get(`Practitioner?family=${family}&address-state=ZZ`)).json)).toEqual([])
    const alone = await get(`Practitioner?address-city=${encodeURIComponent(city)}&address-state=CT`)
    expect(alone.status).toBe(400)
    expect(expressions(alone.json)).toEqual(['address-city', 'address-state'])
    const withNpi = await get(`Practitioner?identifier=${npi}&address-state=CT`)
    expect(expressions(withNpi.json)).toEqual(['address-state'])
    expect(expressions((await get('Practitioner')).json)).toEqual(['identifier'])
    expect(expressions((await get('Practitioner?_count=5')).json)).toEqual(['identifier'])
  })

  it('bounds _count to 1..100 (refused, not reduced) and names every fault at once', async () => {
    for (const count of ['0', '101', 'ten']) {
      const response = await get(`Practitioner?name=a&_count=${count}`)
      expect(response.status).toBe(400)
      expect(expressions(response.json)).toEqual(['_count'])
    }
    const many = await get('Practitioner?name=&_count=500&_include=Practitioner:organization&bogus=1&other=2')
    expect(expressions(many.json)).toEqual(['bogus', 'other'])
    const values = await get('Practitioner?name=&_count=500&_include=Practitioner:organization')
    expect(expressions(values.json)).toEqual(['_count', '_include', 'name'])
  })

  it('adds the roles with _include, outside the _count', async () => {
    const response = await get(
      `Practitioner?identifier=${npi}&_include=PractitionerRole:practitioner&_count=1`,
    )
    expect(ids(response.json)).toEqual([sample.id])
    const roles = fixture('PractitionerRole').filter(
      (r) => r.practitioner.reference === `Practitioner/${sample.id}`,
    )
    expect(ids(response.json, 'include').sort()).toEqual(roles.map((r) => r.id).sort())
    expect(roles.length).toBeGreaterThan(0)
    expect(next(response.json)).toBeUndefined()
  })

  it("adds each match's roles in the order of the matches, then of the file, once each", async () => {
    const roles = fixture('PractitionerRole')
    const response = await get('Practitioner?name=a&_include=PractitionerRole:practitioner&_count=30')
    const matches = ids(response.json)
    const expected = matches.flatMap((id: string) =>
      roles.filter((role) => role.practitioner?.reference === `Practitioner/${id}`).map((role) => role.id),
    )
    // Several matches have roles: the order of the matches shows.
    const withRoles = matches.filter((id: string) =>
      roles.some((role) => role.practitioner?.reference === `Practitioner/${id}`),
    )
    expect(withRoles.length).toBeGreaterThan(3)
    expect(ids(response.json, 'include')).toEqual([...new Set(expected)])
  })
})

describe('page cursors', () => {
  it('walk every match once from page one to the end, with the total on every page', async () => {
    let url: string | undefined = `${BASE}/OrganizationAffiliation?network=${NETWORK}&_count=10`
    const seen: string[] = []
    let pages = 0
    while (url) {
      const response = await t.get(url.replace(t.url, ''), bearer(t.key))
      expect(response.status).toBe(200)
      expect(response.json.total).toBe(inNetwork.length)
      expect(response.json.entry.length).toBeLessThanOrEqual(10)
      seen.push(...ids(response.json))
      url = next(response.json)
      pages++
    }
    expect(pages).toBe(Math.ceil(inNetwork.length / 10))
    expect(seen).toHaveLength(new Set(seen).size)
    expect(seen.sort()).toEqual(inNetwork.map((a) => a.id).sort())
  })

  it('refuse an altered, foreign, expired or accompanied cursor with 400 on page', async () => {
    const first = await get('Practitioner?name=a&_count=2')
    const link = next(first.json) as string
    const cursor = new URL(link).searchParams.get('page') as string
    // Cursors are encrypted and authenticated: any byte changed is refused.
    const sealed = Buffer.from(cursor, 'base64url')
    sealed[20] = (sealed[20] as number) ^ 1
    const altered = sealed.toString('base64url')
    for (const bad of [altered, `${cursor.slice(0, -2)}xx`, 'garbage']) {
      const response = await get(`Practitioner?page=${encodeURIComponent(bad)}`)
      expect(response.status).toBe(400)
      expect(response.json.issue[0]).toMatchObject({ code: 'invalid', expression: ['page'] })
    }
    const foreign = await get(`PractitionerRole?page=${encodeURIComponent(cursor)}`)
    expect(foreign.status).toBe(400)
    expect(foreign.json.issue[0].details.text).toMatch(/Practitioner search/)
    const accompanied = await get(`Practitioner?page=${encodeURIComponent(cursor)}&_count=5`)
    expect(expressions(accompanied.json)).toEqual(['_count'])
    expect((await get(`Practitioner?page=${encodeURIComponent(cursor)}`)).status).toBe(200)

    t.setNow(t.now() + 31 * 60 * 1000)
    try {
      const expired = await get(`Practitioner?page=${encodeURIComponent(cursor)}`)
      expect(expired.status).toBe(400)
      expect(expired.json.issue[0].expression).toEqual(['page'])
      expect(expired.json.issue[0].details.text).toMatch(/expired/)
    } finally {
      t.setNow(t.now() - 31 * 60 * 1000)
    }
  })
})

describe('OrganizationAffiliation', () => {
  const listed = inNetwork[0]
  const participant = listed.participatingOrganization.reference.split('/')[1] as string
  const outsider = affiliations.find(
    (a) => !a.network.some((n: any) => n.reference === `Organization/${NETWORK}`),
  )
  const outsiderOrg = outsider.participatingOrganization.reference.split('/')[1] as string

  it('answers whether the directory lists an organization in a network, in every value form', async () => {
    for (const network of [NETWORK, `Organization/${NETWORK}`, `${t.url}${BASE}/Organization/${NETWORK}`]) {
      const response = await get(
        `OrganizationAffiliation?network=${encodeURIComponent(network)}&participating-organization=${participant}`,
      )
      expect(response.status).toBe(200)
      expect(ids(response.json)).toContain(listed.id)
    }
    const absent = await get(
      `OrganizationAffiliation?network=${NETWORK}&participating-organization=Organization/${outsiderOrg}`,
    )
    expect(absent.json.total).toBe(
      affiliations.filter(
        (a) =>
          a.participatingOrganization.reference === `Organization/${outsiderOrg}` &&
          a.network.some((n: any) => n.reference === `Organization/${NETWORK}`),
      ).length,
    )
  })

  it('takes the network as its own primary organization', async () => {
    const response = await get(`OrganizationAffiliation?primary-organization=${NETWORK}&_summary=count`)
    expect(response.json.total).toBe(inNetwork.length)
    expect(response.json.entry).toEqual([])
    const withOrg = affiliations.find((a) => a.organization)
    const primary = withOrg.organization.reference.split('/')[1]
    const byPrimary = await get(`OrganizationAffiliation?primary-organization=${primary}&_count=100`)
    expect(ids(byPrimary.json)).toContain(withOrg.id)
  })

  it('refuses another server address, active alone, and _summary=count with _include, _count or page', async () => {
    const foreign = await get(
      `OrganizationAffiliation?network=${encodeURIComponent(`https://elsewhere.example/fhir/Organization/${NETWORK}`)}`,
    )
    expect(foreign.status).toBe(400)
    expect(expressions(foreign.json)).toEqual(['network'])
    expect(expressions((await get('OrganizationAffiliation?active=true')).json)).toEqual(['active'])
    expect(ids((await get(`OrganizationAffiliation?network=${NETWORK}&active=false`)).json)).toEqual([])
    const combined = await get(
      `OrganizationAffiliation?network=${NETWORK}&_summary=count&_count=5&_include=OrganizationAffiliation:network`,
    )
    expect(expressions(combined.json)).toEqual(['_count', '_include'])
    expect(expressions((await get('OrganizationAffiliation?network=a&_revinclude=x')).json)).toEqual([
      '_revinclude',
    ])
    expect(expressions((await get('OrganizationAffiliation?_id=bad_id!')).json)).toEqual(['_id'])
    const tooMany = await get(
      `OrganizationAffiliation?network=${NETWORK}&${'_include=OrganizationAffiliation:network&'.repeat(17)}`,
    )
    expect(tooMany.status).toBe(400)
    expect(tooMany.json.issue[0]).toMatchObject({ code: 'too-long', expression: ['_include'] })
  })

  it('includes the organizations asked, once each', async () => {
    const response = await get(
      `OrganizationAffiliation?_id=${listed.id}&_include=OrganizationAffiliation:participating-organization&_include=OrganizationAffiliation:network`,
    )
    expect(ids(response.json)).toEqual([listed.id])
    const expected = [participant, ...listed.network.map((n: any) => n.reference.split('/')[1])]
    expect(ids(response.json, 'include').sort()).toEqual([...new Set(expected)].sort())
  })

  it('includes in the order of the matches, the includes asked and their references, in files of either format', async () => {
    const query = `OrganizationAffiliation?network=${NETWORK}&_count=100&_include=OrganizationAffiliation:primary-organization&_include=OrganizationAffiliation:participating-organization`
    const held = new Set(fixture('Organization').map((o) => o.id))
    const byId = new Map(affiliations.map((a) => [a.id, a]))
    // Each include's paths as its search parameter indexes them, in the order they were asked.
    const asked = [['organization', 'network'], ['participatingOrganization']]
    const expectedOf = (bundle: any) => {
      const seen = new Set<string>()
      const included: string[] = []
      for (const id of ids(bundle)) {
        for (const paths of asked) {
          for (const path of paths) {
            for (const reference of [byId.get(id)[path] ?? []].flat()) {
              const target = String(reference.reference).replace(/^Organization\//, '')
              if (held.has(target) && !seen.has(target)) included.push(target)
              seen.add(target)
            }
          }
        }
      }
      return included
    }
    const current = (await get(query)).json
    const matches = ids(current).map((id: string) => byId.get(id))
    // Order shows: matches whose references are several, in an order that is not the ids'.
    expect(matches.some((a: any) => [a.organization, a.network].flat().filter(Boolean).length >= 2)).toBe(
      true,
    )
    expect(ids(current, 'include')).toEqual(expectedOf(current))
    expect(ids(current, 'include')).not.toEqual([...ids(current, 'include')].sort())

    // A release file made before references were indexed by resource: its includes read the matches' text.
    const old = await startTestServer()
    try {
      await importPlanNet(old)
      const name = readdirSync(old.dir).find((file) => /\.directory-\d+\.db$/.test(file)) as string
      const file = new Database(join(old.dir, name))
      try {
        expect(file.pragma('user_version', { simple: true })).toBe(RELEASE_FORMAT)
        file.exec('DROP INDEX dir_ref_of')
        file.pragma('user_version = 1')
      } finally {
        file.close()
      }
      const before = (await old.get(`${BASE}/${query}`, bearer(old.key))).json
      expect(ids(before)).toEqual(ids(current))
      expect(ids(before, 'include')).toEqual(ids(current, 'include'))
    } finally {
      await old.close()
    }
  })
})

describe('Endpoint, Organization, HealthcareService, Location', () => {
  const endpoint = fixture('Endpoint')[0]
  const org = endpoint.managingOrganization.reference.split('/')[1]

  it('searches endpoints by organization, narrowed by connection type, status and name', async () => {
    const all = await get(`Endpoint?organization=${org}&_include=Endpoint:organization`)
    expect(ids(all.json)).toContain(endpoint.id)
    expect(ids(all.json, 'include')).toEqual([org])
    expect(all.json.total).toBe(ids(all.json).length)
    for (const narrow of [
      'connection-type=direct-project',
      `connection-type=${encodeURIComponent('http://terminology.hl7.org/CodeSystem/endpoint-connection-type|direct-project')}`,
      'status=active',
      `name=${encodeURIComponent(endpoint.name.split(' ')[0].toLowerCase())}`,
    ]) {
      expect(ids((await get(`Endpoint?organization=${org}&${narrow}`)).json)).toContain(endpoint.id)
    }
    expect(ids((await get(`Endpoint?organization=${org}&connection-type=hl7-fhir-rest`)).json)).toEqual([])
    const bad = await get('Endpoint?connection-type=smoke-signal&status=dormant&name=x')
    expect(expressions(bad.json)).toEqual(['connection-type', 'status'])
    const alone = await get('Endpoint?status=active&name=x')
    expect(expressions(alone.json)).toEqual(['name', 'status'])
    expect(expressions((await get(`Endpoint?name=${'x'.repeat(101)}&organization=a`)).json)).toEqual(['name'])
  })

  it('finds networks and organizations by type, name and state; services by organization and specialty', async () => {
    const networks = fixture('Organization').filter((o) =>
      o.type?.some((t: any) => t.coding.some((c: any) => c.code === 'ntwk')),
    )
    const counted = await get('Organization?type=ntwk&_summary=count')
    expect(counted.json.total, counted.text).toBe(networks.length)
    const named = await get(
      `Organization?name=${encodeURIComponent(networks[0].name.split(' ')[0])}&type=ntwk&_count=100`,
    )
    expect(ids(named.json)).toContain(networks[0].id)
    expect(expressions((await get('Organization?address-state=MA')).json)).toEqual(['address-state'])
    const service = fixture('HealthcareService')[0]
    const provider = service.providedBy.reference.split('/')[1]
    const specialty = service.specialty?.[0]?.coding[0]
    const byOrg = await get(`HealthcareService?organization=${provider}`)
    expect(ids(byOrg.json)).toContain(service.id)
    if (specialty) {
      const bySpecialty = await get(
        `HealthcareService?specialty=${encodeURIComponent(`${specialty.system}|${specialty.code}`)}&organization=${provider}`,
      )
      expect(ids(bySpecialty.json)).toContain(service.id)
    }
  })

  it('reads by id with the id pattern enforced; Location has no search', async () => {
    const location = fixture('Location')[0]
    const read = await get(`Location/${location.id}`)
    expect(read.status).toBe(200)
    expect(read.json).toEqual(location)
    expect((await get('Location/no_such!')).status).toBe(400)
    const missing = await get('Location/unknown-location')
    expect(missing.status).toBe(404)
    expect(missing.json.issue[0].code).toBe('not-found')
    expect((await get('Location?name=x')).status).toBe(404)
    expect((await get(`Organization/${org}`)).json.id).toBe(org)
    expect((await get(`Location/${location.id}?x=1`)).status).toBe(400)
  })
})

describe('declarations', () => {
  it('types every search parameter in the CapabilityStatement and documents the paths in /openapi.json', async () => {
    const capability = (await get('metadata')).json
    const resources = Object.fromEntries(capability.rest[0].resource.map((r: any) => [r.type, r]))
    const typeOf = (resource: string, name: string) =>
      resources[resource].searchParam.find((p: any) => p.name === name)?.type
    expect(typeOf('Practitioner', 'identifier')).toBe('token')
    expect(typeOf('Practitioner', 'name')).toBe('string')
    expect(typeOf('Practitioner', '_count')).toBe('number')
    expect(typeOf('OrganizationAffiliation', 'network')).toBe('reference')
    expect(resources.Location.interaction).toEqual([{ code: 'read' }])
    const openapi = (await t.get('/openapi.json')).json
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([`${BASE}/Practitioner`, `${BASE}/Location/{id}`, `${BASE}/HealthcareService`]),
    )
  })

  it('answers directory entries inside a batch as alone', async () => {
    const urls = ['Practitioner?name=a&_count=1', 'Practitioner?address-city=x', 'Location/unknown-location']
    const response = await t.send('POST', BASE, {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Bundle',
        type: 'batch',
        entry: urls.map((url) => ({ request: { method: 'GET', url } })),
      }),
    })
    expect(response.json.entry.map((e: any) => e.response.status.slice(0, 3))).toEqual(['200', '400', '404'])
    const alone = await get(urls[0] as string)
    expect(ids(response.json.entry[0].resource)).toEqual(ids(alone.json))
  })
})

describe('totals', () => {
  /** Imports `organizations` into `own` by the CLI, as a release of their own. */
  const importOrganizations = async (own: TestServer, organizations: object[]) => {
    const file = join(own.dir, 'Organization.ndjson')
    writeFileSync(file, organizations.map((organization) => JSON.stringify(organization)).join('\n'))
    const imported = await runCli(['import', 'directory', file, '--db', own.dbPath])
    expect(imported.code, imported.stderr).toBe(0)
  }

  /** Opens the release file `own` serves, to look inside it or to make it as an older version did. */
  const releaseFile = (own: TestServer) =>
    new Database(
      join(own.dir, readdirSync(own.dir).find((name) => /\.directory-\d+\.db$/.test(name)) as string),
    )

  /** Follows three pages of `query`, expecting `total` on each. */
  const expectTotalOnPages = async (own: TestServer, query: string, total: number) => {
    let url: string | undefined = `${BASE}/Organization?${query}&_count=50`
    let pages = 0
    while (url && pages < 3) {
      const response = await own.get(url.replace(own.url, ''), bearer(own.key))
      expect(response.json.total, `${query}, page ${pages + 1}`).toBe(total)
      url = next(response.json)
      pages++
    }
    expect(pages).toBe(3)
  }

  it('are exact on every page, whether the first page, a count query or the tallies of the release counted', async () => {
    // Past the matches a first page looks up to count them itself (1,000), and under it.
    const organizations = Array.from({ length: 1_203 }, (_, index) => ({
      resourceType: 'Organization',
      id: `org-${index}`,
      name: index % 2 === 0 ? `Even Clinic ${index}` : `Odd Clinic ${index}`,
      type: [{ coding: [{ code: index < 3 ? 'dept' : 'prov' }] }],
    }))
    const totals = [
      ['type=prov', 1_200], // one value held past 1,000 times: tallied as the release was built
      ['name=clinic', 1_203], // a text match past 1,000: the count query
      ['name=even', 602], // under 1,000: the first page
      ['name=odd&type=prov', 600],
    ] as const
    const own = await startTestServer()
    try {
      await importOrganizations(own, organizations)
      for (const [query, total] of totals) await expectTotalOnPages(own, query, total)
      const file = releaseFile(own)
      try {
        // Only what a first page cannot count is tallied.
        expect(file.prepare('SELECT code, n FROM dir_token_tally').all()).toEqual([
          { code: 'prov', n: 1_200 },
        ])
      } finally {
        file.close()
      }
    } finally {
      await own.close()
    }

    // A file made before tallies: the count query answers the same.
    const old = await startTestServer()
    try {
      await importOrganizations(old, organizations)
      const file = releaseFile(old)
      try {
        file.exec('DROP TABLE dir_token_tally; DROP TABLE dir_ref_tally')
        file.pragma('user_version = 2')
      } finally {
        file.close()
      }
      for (const [query, total] of totals) await expectTotalOnPages(old, query, total)
    } finally {
      await old.close()
    }
  })

  it('count a resource once when it holds the asked value twice', async () => {
    const own = await startTestServer()
    try {
      // One identifier value under two systems: a search by value alone meets most organizations twice.
      const organizations = Array.from({ length: 1_005 }, (_, index) => ({
        resourceType: 'Organization',
        id: `org-${index}`,
        name: `Clinic ${index}`,
        identifier: [
          { system: 'urn:example:a', value: 'shared' },
          ...(index >= 3 ? [{ system: 'urn:example:b', value: 'shared' }] : []),
        ],
      }))
      await importOrganizations(own, organizations)
      const query = `${BASE}/Organization?identifier=shared`
      // The release's tally (past what a first page counts itself), the count query, then pages.
      expect((await own.get(`${query}&_summary=count`, bearer(own.key))).json.total).toBe(1_005)
      expect((await own.get(`${query}&name=clinic&_summary=count`, bearer(own.key))).json.total).toBe(1_005)
      // Under one system: not the value's tally, which counts every system.
      const underB = `${BASE}/Organization?identifier=${encodeURIComponent('urn:example:b|shared')}`
      expect((await own.get(`${underB}&_summary=count`, bearer(own.key))).json.total).toBe(1_002)
      const first = await own.get(`${query}&_count=100`, bearer(own.key))
      expect(first.json.total).toBe(1_005)
      expect(new Set(ids(first.json)).size).toBe(100)
      const second = await own.get((next(first.json) as string).replace(own.url, ''), bearer(own.key))
      expect(second.json.total).toBe(1_005)
    } finally {
      await own.close()
    }
  })
})
