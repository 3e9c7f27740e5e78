import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { rawRequest } from './support/rawHttp.js'

/** A batch entry answers as the same request alone would: same checks, same order, whatever its neighbours do. */
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
})
afterAll(() => t.close())

const post = (path: string, body: unknown, server = t) => server.postFhir(`/v1/fhir/r4${path}`, body)
const batch = (entry: unknown[], server = t) =>
  post('', { resourceType: 'Bundle', type: 'batch', entry }, server)
const statuses = (response: { json: { entry: { response: { status: string } }[] } }) =>
  response.json.entry.map((entry) => entry.response.status)

describe('malformed entries', () => {
  it('answer 400 in their own slot while the others run', async () => {
    const metadata = { request: { method: 'GET', url: 'metadata' } }
    const response = await batch([metadata, null, 5, true, 'x', [], {}, { request: null }, metadata])
    expect(response.status).toBe(200)
    expect(statuses(response)).toEqual([
      '200 OK',
      ...Array.from({ length: 7 }, () => '400 Bad Request'),
      '200 OK',
    ])
    expect(response.json.entry[1].resource.issue[0].details.text).toMatch(/request\.method/)
  })
})

describe('entries go through the checks of a lone request', () => {
  it.each([
    ['GET', 'metadata?_format=xml'],
    ['GET', 'Practitioner?name=cormier&_count=1&_format=xml'],
    ['GET', 'InsurancePlan/$counties?state=RI&_format=html'],
    ['GET', 'metadata?_format=bogus'],
    ['GET', 'Practitioner/%2e%2e'],
    ['GET', 'Location/./1/../2'],
    ['GET', 'metadata/'],
    ['GET', 'Metadata'],
    ['GET', 'CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=male'],
  ])('%s %s', async (method, url) => {
    const alone = await rawRequest(t.url, method, `/v1/fhir/r4/${url}`, bearer(t.key))
    const entry = (await batch([{ request: { method, url } }])).json.entry[0]
    expect(entry.response.status.split(' ')[0]).toBe(String(alone.status))
    expect(entry.resource).toEqual(alone.json)
  })

  it('answers OPTIONS 204 with no resource, as alone', async () => {
    const alone = await t.send('OPTIONS', '/v1/fhir/r4/metadata', { headers: bearer(t.key) })
    expect(alone.status).toBe(204)
    const entry = (await batch([{ request: { method: 'OPTIONS', url: 'metadata' } }])).json.entry[0]
    expect(entry).toEqual({ response: { status: '204 No Content' } })
  })

  it('refuses a URL no lone request could carry', async () => {
    const entry = (await batch([{ request: { method: 'GET', url: 'Loc ation/1' } }])).json.entry[0]
    expect(entry.response.status).toBe('400 Bad Request')
  })

  it('takes an absolute URL only under this service', async () => {
    const response = await batch([
      { request: { method: 'GET', url: `${t.url}/v1/fhir/r4/metadata?_format=json` } },
      { request: { method: 'GET', url: 'http://elsewhere/v1/fhir/r4/metadata' } },
    ])
    expect(statuses(response)).toEqual(['200 OK', '404 Not Found'])
  })
})

describe('a null parameter value is a missing value', () => {
  it('in $lookup and $expand bodies, alone and in a batch', async () => {
    const lookup = {
      resourceType: 'Parameters',
      parameter: [
        { name: 'system', valueUri: 'http://hl7.org/fhir/administrative-gender' },
        { name: 'code', valueCode: null },
      ],
    }
    const alone = await post('/CodeSystem/$lookup', lookup)
    expect(alone.status).toBe(400)
    expect(alone.json.issue[0].expression).toEqual(['code'])
    expect(alone.json.issue[0].details.text).toMatch(/needs a value/)
    const expand = await post('/ValueSet/$expand', {
      resourceType: 'Parameters',
      parameter: [{ name: 'url', valueUri: null }],
    })
    expect(expand.status).toBe(400)
    expect(expand.json.issue[0].details.text).toMatch(/needs a value/)
    const entry = (
      await batch([{ request: { method: 'POST', url: 'CodeSystem/$lookup' }, resource: lookup }])
    ).json.entry[0]
    expect(entry.response.status).toBe('400 Bad Request')
    expect(entry.resource).toEqual(alone.json)
  })
})

describe('entries that wait run side by side', () => {
  let upstream: Server
  let proxy: TestServer
  const seen: string[] = []

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.url ?? '')
      if (req.url?.includes('name=hangs')) return
      res
        .writeHead(200, { 'content-type': 'application/fhir+json' })
        .end(JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [] }))
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/fhir`
    proxy = await startTestServer({ plan: 'scale', env: { SVC_DIRECTORY_URL: base }, batchBudgetMs: 1500 })
  })
  afterAll(async () => {
    await proxy.close()
    upstream.closeAllConnections()
    await new Promise<void>((resolve) => upstream.close(() => resolve()))
  })

  it('so one that hangs does not starve the others of the budget', async () => {
    const response = await batch(
      [
        { request: { method: 'GET', url: 'Practitioner?name=hangs' } },
        { request: { method: 'GET', url: 'Practitioner?name=fast' } },
        { request: { method: 'GET', url: 'InsurancePlan/$counties?state=DC' } },
      ],
      proxy,
    )
    expect(statuses(response)).toEqual(['504 Gateway Timeout', '200 OK', '200 OK'])
    expect(seen.some((url) => url.includes('name=fast'))).toBe(true)
  })
})
