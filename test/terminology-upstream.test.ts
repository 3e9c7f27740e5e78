import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type FakeUpstream, hang, json, type Reply, startFakeUpstream } from './support/fakeUpstream.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/** A remote FHIR terminology server that fails on purpose; LOINC is configured to be answered by it. */
let fake: FakeUpstream
let waits: number[] = []
let t: TestServer

const LOINC = 'http://loinc.org'
const BASE = '/v1/fhir/r4'

const LOOKUP_ANSWER = {
  resourceType: 'Parameters',
  parameter: [
    { name: 'name', valueString: 'LOINC' },
    { name: 'version', valueString: '2.78' },
    { name: 'display', valueString: 'Glucose [Mass/volume] in Blood' },
  ],
}

beforeAll(async () => {
  fake = await startFakeUpstream()
  const base = fake.base
  t = await startTestServer({
    plan: 'scale',
    env: { SVC_TERMINOLOGY_SOURCES: JSON.stringify({ [LOINC]: base }) },
    upstream: {
      timeoutMs: 300,
      retryDelayMs: 50,
      sleep: async (ms) => {
        waits.push(ms)
      },
    },
    batchBudgetMs: 1_000,
  })
})
afterAll(async () => {
  await t.close()
  await fake.close()
})
beforeEach(() => {
  fake.reset()
  waits = []
})

const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))
const post = (path: string, body: unknown) => t.postFhir(`${BASE}/${path}`, body)

describe('a code system answered by its own source', () => {
  it('forwards $lookup with the asked properties and relays the answer', async () => {
    fake.script(json(200, LOOKUP_ANSWER))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0&property=COMPONENT`)
    expect(response.status).toBe(200)
    expect(response.json).toEqual(LOOKUP_ANSWER)
    expect(fake.seen).toHaveLength(1)
    const asked = new URL(fake.seen[0]?.url ?? '', 'http://x')
    expect(asked.pathname).toBe('/fhir/CodeSystem/$lookup')
    expect([...asked.searchParams]).toEqual([
      ['system', LOINC],
      ['code', '2339-0'],
      ['property', 'COMPONENT'],
    ])
  })

  it('forwards $validate-code as a Parameters POST and relays its result', async () => {
    fake.script(
      json(200, { resourceType: 'Parameters', parameter: [{ name: 'result', valueBoolean: false }] }),
    )
    const response = await post('CodeSystem/$validate-code', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'url', valueUri: LOINC },
        { name: 'code', valueCode: '0000-0' },
      ],
    })
    expect(response.status).toBe(200)
    expect(response.json.parameter[0]).toEqual({ name: 'result', valueBoolean: false })
    expect(fake.seen[0]?.method).toBe('POST')
    expect(JSON.parse(fake.seen[0]?.body ?? '{}').parameter).toContainEqual({
      name: 'code',
      valueCode: '0000-0',
    })
  })

  it('forwards $expand of its implicit value set and returns the expansion whole', async () => {
    const expansion = {
      resourceType: 'ValueSet',
      expansion: { total: 2, contains: [{ code: 'a' }, { code: 'b' }] },
    }
    fake.script(json(200, expansion))
    const response = await get(
      `ValueSet/$expand?url=${encodeURIComponent(`${LOINC}?fhir_vs`)}&filter=glucose&count=1`,
    )
    expect(response.status).toBe(200)
    expect(response.json).toEqual(expansion)
    const asked = new URL(fake.seen[0]?.url ?? '', 'http://x')
    expect(asked.searchParams.get('filter')).toBe('glucose')
    expect(asked.searchParams.has('count')).toBe(false)
  })

  it('is listed as served in TerminologyCapabilities', async () => {
    const response = await get('metadata?mode=terminology')
    expect(response.json.codeSystem).toContainEqual({ uri: LOINC })
    const unserved = response.json.extension.map(
      (e: { extension: { valueUri?: string }[] }) => e.extension[0]?.valueUri,
    )
    expect(unserved).not.toContain(LOINC)
    expect(unserved).toContain('http://snomed.info/sct')
  })

  it('relays a not-found OperationOutcome as 404', async () => {
    const outcome = {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'not-found', details: { text: 'Unknown code' } }],
    }
    fake.script(json(404, outcome))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=nope`)
    expect(response.status).toBe(404)
    expect(response.json).toEqual(outcome)
  })
})

describe('upstream failures', () => {
  it('retries once after a short wait, then answers', async () => {
    fake.script(json(500, {}), json(200, LOOKUP_ANSWER))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(200)
    expect(fake.seen).toHaveLength(2)
    expect(waits).toEqual([50])
  })

  it('answers 502 when the source fails twice, never an empty answer', async () => {
    fake.script(json(500, {}), json(503, {}))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(502)
    expect(response.json.resourceType).toBe('OperationOutcome')
    expect(fake.seen).toHaveLength(2)
  })

  it('answers 502 when the source answers something other than the resource asked for', async () => {
    fake.script(json(200, { resourceType: 'Bundle' }))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(502)
    const unreadable: Reply = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{oops')
    fake.script(unreadable, unreadable)
    const garbled = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(garbled.status).toBe(502)
  })

  it('waits a Retry-After of 5 s or less, then retries', async () => {
    fake.script(json(429, {}, { 'retry-after': '3' }), json(200, LOOKUP_ANSWER))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(200)
    expect(waits).toEqual([3000])
  })

  it('answers 503 throttled with Retry-After when the source asks for a longer wait', async () => {
    fake.script(json(429, {}, { 'retry-after': '30' }))
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(503)
    expect(response.json.issue[0].code).toBe('throttled')
    expect(response.headers['retry-after']).toBe('30')
    expect(fake.seen).toHaveLength(1)
  })

  it('answers 504 when the source does not answer in time, after one retry', async () => {
    fake.script(hang, hang)
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(504)
    expect(response.json.issue[0].code).toBe('timeout')
    expect(fake.seen).toHaveLength(2)
  })
})

describe('upstream failures inside a batch', () => {
  const batch = (urls: string[]) =>
    post('', {
      resourceType: 'Bundle',
      type: 'batch',
      entry: urls.map((url) => ({ request: { method: 'GET', url } })),
    })

  it('a throttled entry answers 503 without headers; the others are unaffected', async () => {
    fake.script(json(429, {}, { 'retry-after': '30' }))
    const response = await batch([
      `CodeSystem/$lookup?system=${LOINC}&code=2339-0`,
      'CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=male',
    ])
    expect(response.status).toBe(200)
    expect(response.json.entry[0].response).toEqual({ status: '503 Service Unavailable' })
    expect(response.json.entry[0].resource.issue[0].code).toBe('throttled')
    expect(response.json.entry[1].response.status).toBe('200 OK')
  })

  it('entries still running when the budget runs out answer 504 inside the 200', async () => {
    // The source never answers; its 300 ms per attempt, retried, takes each entry about 0.6 s, and entries
    // beyond the four that wait side by side start after that: the last ones outlast the 1 s budget.
    fake.script(...Array.from({ length: 16 }, () => hang))
    const response = await batch([
      'CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=male',
      ...Array.from({ length: 8 }, (_, code) => `CodeSystem/$lookup?system=${LOINC}&code=${code}`),
    ])
    expect(response.status).toBe(200)
    const statuses = response.json.entry.map((e: { response: { status: string } }) => e.response.status)
    expect(statuses[0]).toBe('200 OK')
    expect(statuses[1]).toBe('504 Gateway Timeout')
    expect(statuses.at(-1)).toBe('504 Gateway Timeout')
    const budget = response.json.entry
      .map(
        (e: { resource: { issue: { details: { text: string } }[] } }) => e.resource.issue?.[0]?.details.text,
      )
      .filter((text: string | undefined) => text?.includes('budget'))
    expect(budget.length).toBeGreaterThan(0)
  })
})
