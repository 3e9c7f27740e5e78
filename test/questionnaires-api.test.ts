import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUESTIONNAIRE_STORE } from '../src/questionnaires/declaration.js'
import { importQuestionnaires } from '../src/questionnaires/importQuestionnaires.js'
import { QUESTIONNAIRE_INDEXES } from '../src/questionnaires/layout.js'
import { hang, json, type Reply, startFakeUpstream } from './support/fakeUpstream.js'
import { expectValidR4 } from './support/fhirValidator.js'
import { QUESTIONNAIRES } from './support/fixtures.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const BASE = '/v1/fhir/r4'
const CURATED = readdirSync(QUESTIONNAIRES).filter((name) => name.endsWith('.json'))

/** Every key of a JSON value, depth first, in the order written: equal lists mean the same member order. */
function keyOrder(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => keyOrder(item, `${path}[${index}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, item]) => [
    `${path}.${key}`,
    ...keyOrder(item, `${path}.${key}`),
  ])
}

const ids = (bundle: any): string[] => (bundle.entry ?? []).map((entry: any) => entry.resource.id)

let t: TestServer
let dir: string
const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))

/** A version of a canonical, written as a file to import. */
function version(url: string, v: string | undefined, status: string, extra: Record<string, unknown> = {}) {
  return {
    resourceType: 'Questionnaire',
    ...(v === undefined ? {} : { id: `form-${v.replaceAll('.', '-')}` }),
    url,
    ...(v === undefined ? {} : { version: v }),
    status,
    title: `Intake form ${v ?? ''}`.trim(),
    item: [{ linkId: '1', text: 'Name', type: 'string' }],
    ...extra,
  }
}

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  dir = t.dir
}, 60_000)
afterAll(() => t.close())

describe('the curated set', () => {
  it('is held by a new store and read back as published: same members, values and order, narrative included', async () => {
    for (const file of CURATED) {
      const published = JSON.parse(readFileSync(join(QUESTIONNAIRES, file), 'utf8'))
      const response = await get(`Questionnaire/${published.id}`)
      expect(response.status, file).toBe(200)
      expect(response.json, file).toEqual(published)
      expect(keyOrder(response.json), file).toEqual(keyOrder(published))
    }
    // PRAPARE, an owned instrument: its copyright text unaltered.
    const prapare = (await get('Questionnaire/prapare-example')).json
    expect(prapare.copyright).toMatch(/NACHC/)
  })

  it('lists the whole set with total, and searches by name, title, status, code and publisher', async () => {
    // Not validated: served as published, and one published form (LHC's PHQ-9) breaks R4 rules of its own.
    const all = (await get('Questionnaire')).json
    expect(all.total).toBe(CURATED.length)
    expect(all.entry).toHaveLength(CURATED.length)
    expect(all.link.some((link: any) => link.relation === 'next')).toBe(false)
    expect(ids((await get('Questionnaire?code=http://loinc.org|44249-1')).json).sort()).toEqual([
      '44249-1-x',
      'phq-9-example',
    ])
    expect(ids((await get('Questionnaire?code=88121-9')).json).sort()).toEqual([
      'hunger-vital-sign-example',
      'questionnaire-sdc-profile-example-hunger-vital-signs',
    ])
    expect(ids((await get('Questionnaire?title=hunger')).json).sort()).toEqual([
      'hunger-vital-sign-example',
      'questionnaire-sdc-profile-example-hunger-vital-signs',
    ])
    expect(ids((await get('Questionnaire?title:contains=ealth Que')).json)).toEqual([
      'questionnaire-sdc-profile-example-PHQ9',
    ])
    expect(ids((await get('Questionnaire?name:exact=TAPS')).json)).toEqual(['TAPS'])
    expect(ids((await get('Questionnaire?status=draft')).json).sort()).toEqual(['44249-1-x', '55418-8-x'])
    expect((await get('Questionnaire?status=active&code=44249-1')).json.total).toBe(1)
  })

  it('resolves a canonical, and keeps the one with no url readable by id only', async () => {
    const byUrl = (await get('Questionnaire?url=http://hl7.org/fhir/us/core/Questionnaire/AUDIT-C')).json
    expect(ids(byUrl)).toEqual(['AUDIT-C'])
    const sdc = 'http://hl7.org/fhir/uv/sdc/Questionnaire/questionnaire-sdc-profile-example-PHQ9'
    expect(ids((await get(`Questionnaire?url=${sdc}|4.0.0-ballot`)).json)).toEqual([
      'questionnaire-sdc-profile-example-PHQ9',
    ])
    expect((await get(`Questionnaire?url=${sdc}|3.0.0`)).json.total).toBe(0)
    expect((await get('Questionnaire/44249-1-x')).status).toBe(200)
    // A canonical that looks like a RESTful read on a live server is only an identifier: answered locally.
    expect(
      ids(
        (await get('Questionnaire?url=https://lforms-fhir.nlm.nih.gov/baseR4/Questionnaire/55418-8-x')).json,
      ),
    ).toEqual(['55418-8-x'])
  })
})

describe('versions of one canonical', () => {
  const url = 'https://forms.example.org/Questionnaire/intake'
  beforeAll(async () => {
    const file = join(dir, 'versions.ndjson')
    writeFileSync(
      file,
      [
        version(url, '1.2', 'retired'),
        version(url, '1.10', 'active'),
        version(url, '1.9', 'active'),
        version(url, '2.0', 'draft'),
        // Published without id: the service gives it one.
        { ...version(url, '0.1', 'active'), id: undefined, date: '2020-01-01' },
      ]
        .map((resource) => JSON.stringify(resource))
        .join('\n'),
    )
    const summary = await importQuestionnaires(t.server.db, [file])
    expect(summary.refused).toBe(0)
  })

  it('answers url|version with exactly that version, and url alone with every version, the current one first', async () => {
    for (const v of ['1.2', '1.10', '1.9', '2.0']) {
      const found = (await get(`Questionnaire?url=${url}|${v}`)).json
      expect(found.total).toBe(1)
      expect(found.entry[0].resource.version).toBe(v)
      const split = (await get(`Questionnaire?url=${url}&version=${v}`)).json
      expect(split.entry[0].resource.version).toBe(v)
    }
    const every = (await get(`Questionnaire?url=${encodeURIComponent(url)}`)).json
    expectValidR4(every)
    expect(every.total).toBe(5)
    // active (1.10 > 1.9 > 0.1 as numbers), then draft, then retired.
    expect(every.entry.map((entry: any) => entry.resource.version)).toEqual([
      '1.10',
      '1.9',
      '0.1',
      '2.0',
      '1.2',
    ])
  })

  it('gives an id to one published without, and a derived one when its id is held by another url|version', async () => {
    const unnamed = (await get(`Questionnaire?url=${url}|0.1`)).json.entry[0].resource
    expect(unnamed.id).toMatch(/^q-[0-9a-f]{16}$/)
    expect(Object.keys(unnamed).slice(0, 3)).toEqual(['resourceType', 'id', 'url'])
    const clash = join(dir, 'clash.json')
    writeFileSync(
      clash,
      JSON.stringify({ ...version('https://other.example.org/Q/x', '1', 'active'), id: 'TAPS' }),
    )
    await importQuestionnaires(t.server.db, [clash])
    const derived = (await get('Questionnaire?url=https://other.example.org/Q/x')).json.entry[0].resource
    expect(derived.id).toMatch(/^TAPS-[0-9a-f]{8}$/)
    expect((await get('Questionnaire/TAPS')).json.url).toBe('http://hl7.org/fhir/us/core/Questionnaire/TAPS')
    expect((await get(`Questionnaire/${derived.id}`)).json.url).toBe('https://other.example.org/Q/x')
  })

  it('replaces the same url|version on a new import, and keeps other versions beside it', async () => {
    const file = join(dir, 'again.json')
    writeFileSync(file, JSON.stringify(version(url, '1.9', 'retired', { title: 'Intake form, revised' })))
    const summary = await importQuestionnaires(t.server.db, [file])
    expect(summary.sources[0]).toMatchObject({ read: 1, written: 1, replaced: 1, refused: 0 })
    const found = (await get(`Questionnaire?url=${url}|1.9`)).json
    expect(found.total).toBe(1)
    expect(found.entry[0].resource.title).toBe('Intake form, revised')
    expect((await get(`Questionnaire?url=${url}`)).json.total).toBe(5)
  })
})

describe('strict parameters, batch and documents', () => {
  it('indexes each search parameter as the layout the tables are made from says', () => {
    const params = QUESTIONNAIRE_STORE.types[0]?.search?.params ?? {}
    const indexed = Object.entries(params).filter(([, param]) => param.index !== undefined)
    expect(Object.fromEntries(indexed.map(([name, param]) => [name, param.index]))).toEqual(
      QUESTIONNAIRE_INDEXES,
    )
  })

  it('refuses undeclared and malformed parameters by name, all at once', async () => {
    const response = await get('Questionnaire?status=final&url=no%20scheme&code=|&title:contains=ab')
    expect(response.status).toBe(400)
    const named = response.json.issue.map((issue: any) => issue.expression?.[0])
    expect(named).toEqual(expect.arrayContaining(['status', 'url', 'code', 'title:contains']))
    // The list is returned whole: paging parameters are not declared.
    const paged = await get('Questionnaire?_count=5&page=abc')
    expect(paged.status).toBe(400)
    expect(paged.json.issue.map((issue: any) => issue.expression?.[0])).toEqual(['_count', 'page'])
    expect((await get('Questionnaire/not_an_id')).status).toBe(400)
    expect((await get('Questionnaire/nope')).status).toBe(404)
  })

  it('reads and searches inside a batch', async () => {
    const entries = ['Questionnaire/TAPS', 'Questionnaire?code=88121-9', 'Questionnaire?status=nope'].map(
      (url) => ({
        request: { method: 'GET', url },
      }),
    )
    const response = await t.send('POST', BASE, {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: entries }),
    })
    expect(response.status).toBe(200)
    expect(response.json.entry.map((entry: any) => entry.response.status)).toEqual([
      '200 OK',
      '200 OK',
      '400 Bad Request',
    ])
    expect(response.json.entry[0].resource).toEqual(
      JSON.parse(readFileSync(join(QUESTIONNAIRES, 'us-core--Questionnaire-TAPS.json'), 'utf8')),
    )
    expect(response.json.entry[1].resource.total).toBe(2)
  })

  it('lists Questionnaire, its interactions and search parameters in the CapabilityStatement and OpenAPI', async () => {
    const capability = (await get('metadata')).json
    const questionnaire = capability.rest[0].resource.find((r: any) => r.type === 'Questionnaire')
    expect(questionnaire.interaction.map((i: any) => i.code).sort()).toEqual(['read', 'search-type'])
    expect(questionnaire.searchParam.map((p: any) => p.name)).toEqual(
      expect.arrayContaining([
        '_id',
        'url',
        'version',
        'name',
        'title',
        'status',
        'code',
        'publisher',
        'identifier',
      ]),
    )
    const openapi = (await t.get('/openapi.json')).json
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([`${BASE}/Questionnaire`, `${BASE}/Questionnaire/{id}`]),
    )
  })
})

describe('forms from configured addresses', () => {
  const canonicalOf = (base: string, name: string) =>
    `${base.replace(/\/fhir$/, '')}/forms/Questionnaire/${name}`

  it('fetches a canonical under a prefix address, keeps it as published, and revalidates it with its validators', async () => {
    const fake = await startFakeUpstream()
    const prefix = `${fake.base.replace(/\/fhir$/, '')}/forms/`
    const remote = await startTestServer({
      plan: 'scale',
      env: { SVC_QUESTIONNAIRE_SOURCES: prefix, SVC_QUESTIONNAIRE_TIMEOUT_MS: '300' },
      upstream: { sleep: async () => undefined },
    })
    try {
      const canonical = canonicalOf(fake.base, 'intake')
      const published = `{"resourceType":"Questionnaire","id":"intake","url":"${canonical}","status":"active",\n  "item":[{"linkId":"a","type":"string","text":"Why?"}]}`
      fake.script((_req, res) =>
        res.writeHead(200, { etag: '"v1"', 'content-type': 'application/fhir+json' }).end(published),
      )
      const search = () =>
        remote.get(`${BASE}/Questionnaire?url=${encodeURIComponent(canonical)}`, bearer(remote.key))
      const first = await search()
      expect(first.status).toBe(200)
      expect(first.json.total).toBe(1)
      expect(fake.seen[0]?.url).toBe('/forms/Questionnaire/intake')
      const read = await remote.get(`${BASE}/Questionnaire/intake`, bearer(remote.key))
      expect(read.text).toBe(published)

      fake.reset()
      fake.script((req, res) => res.writeHead(req.headers['if-none-match'] === '"v1"' ? 304 : 500).end())
      expect((await search()).json.total).toBe(1)
      expect(fake.seen).toHaveLength(1)

      // Gone at the source: answered, total 0, and the copy dropped.
      fake.reset()
      fake.script((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>gone</h1>'))
      expect((await search()).json.total).toBe(0)
      expect((await remote.get(`${BASE}/Questionnaire/intake`, bearer(remote.key))).status).toBe(404)

      // A canonical outside every configured address is never fetched.
      fake.reset()
      const outside = await remote.get(
        `${BASE}/Questionnaire?url=${encodeURIComponent(`${fake.base.replace(/\/fhir$/, '')}/elsewhere/Questionnaire/x`)}`,
        bearer(remote.key),
      )
      expect(outside.json.total).toBe(0)
      expect(fake.seen).toHaveLength(0)
    } finally {
      await remote.close()
      await fake.close()
    }
  })

  it('follows the upstream rules: retried once, then 503 throttled, 502, 504; wrong resources, foreign redirects and oversized bodies refused and not kept', async () => {
    const fake = await startFakeUpstream()
    const prefix = `${fake.base.replace(/\/fhir$/, '')}/forms/`
    const remote = await startTestServer({
      plan: 'scale',
      env: { SVC_QUESTIONNAIRE_SOURCES: prefix, SVC_QUESTIONNAIRE_TIMEOUT_MS: '300' },
      upstream: { sleep: async () => undefined },
    })
    try {
      const canonical = canonicalOf(fake.base, 'screen')
      const search = () =>
        remote.get(`${BASE}/Questionnaire?url=${encodeURIComponent(canonical)}`, bearer(remote.key))
      const cases: [string, Reply[], number][] = [
        ['429 twice', [json(429, {}, { 'retry-after': '1' }), json(429, {}, { 'retry-after': '1' })], 503],
        ['500 twice', [json(500, {}), json(500, {})], 502],
        ['no answer', [hang, hang], 504],
        ['another resource', [json(200, { resourceType: 'Patient', id: 'p' })], 502],
        [
          'another url',
          [json(200, { resourceType: 'Questionnaire', url: `${canonical}-2`, status: 'active' })],
          502,
        ],
        [
          'a redirect to an unlisted host',
          [(_req, res) => res.writeHead(302, { location: 'http://example.com/x' }).end()],
          502,
        ],
        [
          'a body over 5 MiB',
          [(_req, res) => res.writeHead(200).end(Buffer.alloc(6 * 1024 * 1024, 32))],
          502,
        ],
      ]
      for (const [label, replies, status] of cases) {
        fake.reset()
        fake.script(...replies)
        const answer = await search()
        expect(answer.status, label).toBe(status)
        expect(answer.text, label).not.toContain('127.0.0.1')
      }
      expect((await search()).status).toBe(502)
      // A 500 then an answer: retried once, then served.
      fake.reset()
      const form = { resourceType: 'Questionnaire', id: 'screen', url: canonical, status: 'draft' }
      fake.script(json(500, {}), json(200, form))
      const retried = await search()
      expect(retried.status).toBe(200)
      expect(retried.json.entry[0].resource).toEqual(form)
      expect(fake.seen).toHaveLength(2)
      // A redirect within the address is followed.
      fake.reset()
      const moved = canonicalOf(fake.base, 'screen-moved')
      fake.script(
        (_req, res) => res.writeHead(301, { location: moved }).end(),
        json(200, { ...form, title: 'Moved' }),
      )
      const followed = await search()
      expect(followed.json.entry[0].resource.title).toBe('Moved')
      expect(fake.seen.map((seen) => seen.url)).toEqual([
        '/forms/Questionnaire/screen',
        '/forms/Questionnaire/screen-moved',
      ])
    } finally {
      await remote.close()
      await fake.close()
    }
  })

  it('searches a fhir+ address as a FHIR server: an empty searchset is an answer', async () => {
    const fake = await startFakeUpstream()
    const remote = await startTestServer({
      plan: 'scale',
      env: { SVC_QUESTIONNAIRE_SOURCES: `fhir+${fake.base}` },
      upstream: { sleep: async () => undefined },
    })
    try {
      const canonical = `${fake.base}/Questionnaire/phq`
      const search = () =>
        remote.get(`${BASE}/Questionnaire?url=${encodeURIComponent(canonical)}`, bearer(remote.key))
      fake.script(json(200, { resourceType: 'Bundle', type: 'searchset', total: 0, entry: [] }))
      expect((await search()).json.total).toBe(0)
      expect(fake.seen[0]?.url).toBe(`/fhir/Questionnaire?url=${encodeURIComponent(canonical)}`)
      fake.reset()
      const form = { resourceType: 'Questionnaire', id: 'phq', url: canonical, status: 'active' }
      fake.script(
        json(200, {
          resourceType: 'Bundle',
          type: 'searchset',
          entry: [{ resource: form, search: { mode: 'match' } }],
        }),
      )
      expect((await search()).json.entry[0].resource).toEqual(form)
    } finally {
      await remote.close()
      await fake.close()
    }
  })
})
