import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/**
 * A remote FHIR terminology server that answers from a queue of scripted replies and fails on purpose;
 * LOINC is configured to be answered by it.
 */
type Reply = (req: IncomingMessage, res: ServerResponse) => void
let replies: Reply[] = []
let seen: { method: string; url: string; body: string }[] = []
let waits: number[] = []
let upstream: Server
let t: TestServer

const LOINC = 'http://loinc.org'
const BASE = '/v1/fhir/r4'

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers }).end(JSON.stringify(body))
const hang: Reply = () => undefined
const LOOKUP_ANSWER = {
  resourceType: 'Parameters',
  parameter: [
    { name: 'name', valueString: 'LOINC' },
    { name: 'version', valueString: '2.78' },
    { name: 'display', valueString: 'Glucose [Mass/volume] in Blood' },
  ],
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body })
      const reply = replies.shift()
      if (reply) reply(req, res)
      else res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/fhir`
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
  upstream.closeAllConnections()
  await new Promise<void>((resolve) => upstream.close(() => resolve()))
})
beforeEach(() => {
  replies = []
  seen = []
  waits = []
})

const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))
const post = (path: string, body: unknown) =>
  t.send('POST', `${BASE}/${path}`, {
    headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
    body: JSON.stringify(body),
  })

describe('a code system answered by its own source', () => {
  it('forwards $lookup with the asked properties and relays the answer', async () => {
    replies = [json(200, LOOKUP_ANSWER)]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0&property=COMPONENT`)
    expect(response.status).toBe(200)
    expect(response.json).toEqual(LOOKUP_ANSWER)
    expect(seen).toHaveLength(1)
    const asked = new URL(seen[0]?.url ?? '', 'http://x')
    expect(asked.pathname).toBe('/fhir/CodeSystem/$lookup')
    expect([...asked.searchParams]).toEqual([
      ['system', LOINC],
      ['code', '2339-0'],
      ['property', 'COMPONENT'],
    ])
  })

  it('forwards $validate-code as a Parameters POST and relays its result', async () => {
    replies = [
      json(200, { resourceType: 'Parameters', parameter: [{ name: 'result', valueBoolean: false }] }),
    ]
    const response = await post('CodeSystem/$validate-code', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'url', valueUri: LOINC },
        { name: 'code', valueCode: '0000-0' },
      ],
    })
    expect(response.status).toBe(200)
    expect(response.json.parameter[0]).toEqual({ name: 'result', valueBoolean: false })
    expect(seen[0]?.method).toBe('POST')
    expect(JSON.parse(seen[0]?.body ?? '{}').parameter).toContainEqual({ name: 'code', valueCode: '0000-0' })
  })

  it('forwards $expand of its implicit value set and returns the expansion whole', async () => {
    const expansion = {
      resourceType: 'ValueSet',
      expansion: { total: 2, contains: [{ code: 'a' }, { code: 'b' }] },
    }
    replies = [json(200, expansion)]
    const response = await get(
      `ValueSet/$expand?url=${encodeURIComponent(`${LOINC}?fhir_vs`)}&filter=glucose&count=1`,
    )
    expect(response.status).toBe(200)
    expect(response.json).toEqual(expansion)
    const asked = new URL(seen[0]?.url ?? '', 'http://x')
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
    replies = [json(404, outcome)]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=nope`)
    expect(response.status).toBe(404)
    expect(response.json).toEqual(outcome)
  })
})

describe('upstream failures', () => {
  it('retries once after a short wait, then answers', async () => {
    replies = [json(500, {}), json(200, LOOKUP_ANSWER)]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(200)
    expect(seen).toHaveLength(2)
    expect(waits).toEqual([50])
  })

  it('answers 502 when the source fails twice, never an empty answer', async () => {
    replies = [json(500, {}), json(503, {})]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(502)
    expect(response.json.resourceType).toBe('OperationOutcome')
    expect(seen).toHaveLength(2)
  })

  it('answers 502 when the source answers something other than the resource asked for', async () => {
    replies = [json(200, { resourceType: 'Bundle' })]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(502)
    const unreadable: Reply = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{oops')
    replies = [unreadable, unreadable]
    const garbled = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(garbled.status).toBe(502)
  })

  it('waits a Retry-After of 5 s or less, then retries', async () => {
    replies = [json(429, {}, { 'retry-after': '3' }), json(200, LOOKUP_ANSWER)]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(200)
    expect(waits).toEqual([3000])
  })

  it('answers 503 throttled with Retry-After when the source asks for a longer wait', async () => {
    replies = [json(429, {}, { 'retry-after': '30' })]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(503)
    expect(response.json.issue[0].code).toBe('throttled')
    expect(response.headers['retry-after']).toBe('30')
    expect(seen).toHaveLength(1)
  })

  it('answers 504 when the source does not answer in time, after one retry', async () => {
    replies = [hang, hang]
    const response = await get(`CodeSystem/$lookup?system=${LOINC}&code=2339-0`)
    expect(response.status).toBe(504)
    expect(response.json.issue[0].code).toBe('timeout')
    expect(seen).toHaveLength(2)
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
    replies = [json(429, {}, { 'retry-after': '30' })]
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
    // The source never answers; its 300 ms per attempt, retried, would outlast a 1 s budget with the entries below.
    replies = [hang, hang, hang, hang, hang, hang]
    const response = await batch([
      'CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=male',
      `CodeSystem/$lookup?system=${LOINC}&code=1`,
      `CodeSystem/$lookup?system=${LOINC}&code=2`,
      `CodeSystem/$lookup?system=${LOINC}&code=3`,
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
