import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixture, importPlanNet } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const BASE = '/v1/fhir/r4'
const NETWORK = 'plannet-network-HPID010000'
const ids = (bundle: any) => (bundle.entry ?? []).map((entry: any) => entry.resource.id)

let origin: TestServer
let proxy: TestServer
const waits: number[] = []

beforeAll(async () => {
  origin = await startTestServer({ plan: 'scale' })
  await importPlanNet(origin)
  proxy = await startTestServer({
    plan: 'scale',
    env: { SVC_DIRECTORY_URL: `${origin.url}${BASE}`, SVC_DIRECTORY_API_KEY: origin.key },
    upstream: {
      sleep: async (ms) => {
        waits.push(ms)
      },
    },
  })
})
afterAll(async () => {
  await proxy.close()
  await origin.close()
})

describe('remote directory: one svc serve pointed at another', () => {
  it('forwards searches and reads, with entries and links under its own base and never a Practitioner total', async () => {
    const npi = fixture('Practitioner')[0].identifier[0].value
    const search = await proxy.get(
      `${BASE}/Practitioner?identifier=urn:oid:2.16.840.1.113883.4.6|${npi}&_include=PractitionerRole:practitioner`,
      bearer(proxy.key),
    )
    const direct = await origin.get(
      `${BASE}/Practitioner?identifier=${npi}&_include=PractitionerRole:practitioner`,
      bearer(origin.key),
    )
    expect(search.status).toBe(200)
    expect(ids(search.json)).toEqual(ids(direct.json))
    expect(search.json.entry.map((e: any) => e.search.mode)).toEqual(
      direct.json.entry.map((e: any) => e.search.mode),
    )
    expect(search.json.total).toBeUndefined()
    for (const entry of search.json.entry) expect(entry.fullUrl.startsWith(`${proxy.url}${BASE}/`)).toBe(true)
    const location = fixture('Location')[0]
    expect((await proxy.get(`${BASE}/Location/${location.id}`, bearer(proxy.key))).json).toEqual(location)
    const missing = await proxy.get(`${BASE}/Location/unknown-location`, bearer(proxy.key))
    expect(missing.status).toBe(404)
  })

  it('wraps the source next links in its own cursors, page one to the end', async () => {
    const expected = fixture('OrganizationAffiliation').filter((a) =>
      a.network.some((n: any) => n.reference === `Organization/${NETWORK}`),
    )
    let url: string | undefined =
      `${BASE}/OrganizationAffiliation?network=${encodeURIComponent(`${proxy.url}${BASE}/Organization/${NETWORK}`)}&_count=20`
    const seen: string[] = []
    while (url) {
      const response = await proxy.get(url, bearer(proxy.key))
      expect(response.status, response.text).toBe(200)
      expect(response.json.total).toBe(expected.length)
      seen.push(...ids(response.json))
      const next = response.json.link.find((l: any) => l.relation === 'next')?.url as string | undefined
      if (next) expect(next.startsWith(`${proxy.url}${BASE}/OrganizationAffiliation?page=`)).toBe(true)
      url = next?.replace(proxy.url, '')
    }
    expect(seen.sort()).toEqual(expected.map((a) => a.id).sort())
  })

  it('checks parameters locally before asking the source', async () => {
    const response = await proxy.get(`${BASE}/Practitioner?address-city=Boston&_count=500`, bearer(proxy.key))
    expect(response.status).toBe(400)
    expect(response.json.issue.map((i: any) => i.expression[0]).sort()).toEqual(['_count'])
  })
})

describe('remote directory failures', () => {
  let fake: ReturnType<typeof createServer>
  let server: TestServer
  let script: ((request: IncomingMessage, response: ServerResponse) => void)[] = []
  let calls = 0

  beforeAll(async () => {
    fake = createServer((request, response) => {
      calls++
      const next = script.shift()
      if (next) next(request, response)
      else response.writeHead(500).end()
    })
    fake.listen(0, '127.0.0.1')
    await once(fake, 'listening')
    server = await startTestServer({
      plan: 'scale',
      env: {
        SVC_DIRECTORY_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/fhir`,
        SVC_DIRECTORY_TIMEOUT_MS: '200',
      },
      upstream: {
        sleep: async (ms) => {
          waits.push(ms)
        },
      },
    })
  })
  afterAll(async () => {
    await server.close()
    fake.closeAllConnections()
    fake.close()
  })

  const search = () => server.get(`${BASE}/Endpoint?organization=abc`, bearer(server.key))
  const bundle = (response: ServerResponse) =>
    response
      .writeHead(200, { 'content-type': 'application/fhir+json' })
      .end(JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [] }))

  it('retries once after a 500, then answers what the source said', async () => {
    script = [(_q, r) => r.writeHead(500).end(), (_q, r) => bundle(r)]
    waits.length = 0
    const response = await search()
    expect(response.status).toBe(200)
    expect(response.json.entry).toEqual([])
    expect(waits).toHaveLength(1)
  })

  it('answers 502 when the source fails twice or answers unreadably, never an empty result', async () => {
    script = [(_q, r) => r.writeHead(500).end(), (_q, r) => r.writeHead(500).end()]
    const failed = await search()
    expect(failed.status).toBe(502)
    expect(failed.json.resourceType).toBe('OperationOutcome')
    script = [(_q, r) => r.writeHead(200).end('{"resourceType":"Patient"}')]
    expect((await search()).status).toBe(502)
  })

  it('answers 503 throttled with Retry-After when the source keeps rate limiting', async () => {
    script = [
      (_q, r) => r.writeHead(429, { 'retry-after': '3' }).end(),
      (_q, r) => r.writeHead(429, { 'retry-after': '3' }).end(),
    ]
    waits.length = 0
    const response = await search()
    expect(response.status).toBe(503)
    expect(response.json.issue[0].code).toBe('throttled')
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(2)
    expect(waits).toEqual([3000])
  })

  it('answers 504 when the source does not answer in time', async () => {
    script = [() => undefined, () => undefined]
    const response = await search()
    expect(response.status).toBe(504)
    expect(response.json.issue[0].code).toBe('timeout')
  })

  it('never forwards a search whose parameters fail locally', async () => {
    const before = calls
    expect((await server.get(`${BASE}/Endpoint?status=active`, bearer(server.key))).status).toBe(400)
    expect(calls).toBe(before)
  })
})
