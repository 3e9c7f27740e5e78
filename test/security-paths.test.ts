import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, listKeys, revokeKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { rawRequest } from './support/rawHttp.js'

/**
 * Every spelling of a keyed path is placed by its canonical form: none reaches a handler without a key, a
 * revoked key, or a key whose organization is refused for the month.
 */
let t: TestServer
let revoked: string
let blocked: string
let servedPaths: { method: string; path: string }[]

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  const { db, live } = t.server
  const old = createKey(db, { org: 'acme', name: 'old' })
  revokeKey({ db, live }, listKeys({ db, live }).find((key) => key.name === 'old')?.id as string)
  revoked = old.key
  createOrganization(db, { slug: 'spent', name: 'Spent', plan: 'developer' })
  blocked = createKey(db, { org: 'spent' }).key
  const orgId = db.prepare("SELECT id FROM organizations WHERE slug = 'spent'").pluck().get()
  live.prepare("INSERT INTO usage_counters (org_id, period, count) VALUES (?, 'M:2026-11', 1000)").run(orgId)
  const openapi = (await t.get('/openapi.json')).json
  servedPaths = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method: method.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, 'x1'),
      })),
    )
    .filter(({ path }) => path.startsWith('/v1'))
})
afterAll(() => t.close())

/** Other spellings of one keyed path, each of which a path normaliser somewhere would take for it. */
function spellings(path: string): string[] {
  const rest = path.slice('/v1/'.length)
  const [first = '', ...others] = rest.split('/')
  const escaped = `%${first.charCodeAt(0).toString(16)}${first.slice(1)}`
  return [
    `/V1/${rest}`,
    path.toUpperCase(),
    `/v1/${escaped}${others.length > 0 ? `/${others.join('/')}` : ''}`,
    `/%76%31/${rest}`,
    `/v1/./${rest}`,
    `//v1/${rest}`,
    `/v1//${rest}`,
    `/v1/x/../${rest}`,
    `/v1/%2e/${rest}`,
    `/v1/%252e/${rest}`,
    `/x/../v1/${rest}`,
    `/v1/fhir/r4/../../${rest}`,
    `${path}/`,
  ]
}

const body = JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [] })
const send = (method: string, path: string, headers: Record<string, string> = {}) =>
  rawRequest(
    t.url,
    method,
    path,
    method === 'POST' ? { ...headers, 'content-type': 'application/fhir+json' } : headers,
    method === 'POST' ? body : undefined,
  )

describe('path spellings under /v1', () => {
  it('walks every served path of /openapi.json', () => {
    expect(servedPaths.length).toBeGreaterThan(20)
  })

  it('answers 401 to every spelling of every served path without a key, and with a revoked one', async () => {
    const answered: string[] = []
    for (const { method, path } of servedPaths) {
      for (const spelling of [path, ...spellings(path)]) {
        for (const headers of [{}, bearer(revoked)]) {
          const response = await send(method, spelling, headers)
          if (response.status !== 401) answered.push(`${method} ${spelling} -> ${response.status}`)
          expect(response.headers['x-request-id']).toBeDefined()
        }
      }
    }
    expect(answered).toEqual([])
  })

  it('refuses every spelling to an organization blocked for the month', async () => {
    const answered: string[] = []
    for (const { method, path } of servedPaths) {
      for (const spelling of spellings(path)) {
        const response = await send(method, spelling, bearer(blocked))
        if (response.status !== 429) answered.push(`${method} ${spelling} -> ${response.status}`)
      }
    }
    expect(answered).toEqual([])
  })

  it('with a key, a spelling that is not exactly a served path is 404 in its base shape', async () => {
    const fhirR4 = await send('GET', '/v1/fhir/R4/metadata', bearer(t.key))
    expect(fhirR4.status).toBe(404)
    expect(fhirR4.headers['content-type']).toMatch(/^application\/fhir\+json/)
    expect(fhirR4.json.resourceType).toBe('OperationOutcome')
    const nothing = await send('GET', '/v1/fhir/R4/Nothing', bearer(t.key))
    expect(nothing.json.resourceType).toBe('OperationOutcome')
    const upper = await send('GET', '/V1/scheduling/slots?limit=1', bearer(t.key))
    expect(upper.status).toBe(404)
    expect(upper.headers['content-type']).toMatch(/^application\/problem\+json/)
    const xml = await send('GET', '/V1/fhir/r4/metadata?_format=xml', bearer(t.key))
    expect(xml.status).toBe(406)
    expect(xml.json.resourceType).toBe('OperationOutcome')
  })

  it('with a key, routes an escaped letter, digit or $ as the character itself, and nothing else', async () => {
    const lookup = 'system=http://hl7.org/fhir/administrative-gender&code=male'
    const plain = await send('GET', `/v1/fhir/r4/CodeSystem/$lookup?${lookup}`, bearer(t.key))
    expect(plain.status).toBe(200)
    for (const spelling of [
      `/v1/fhir/r4/CodeSystem/%24lookup?${lookup}`,
      `/v1/fhir/r4/%43odeSystem/%24%6c%6F%6Fkup?${lookup}`,
    ]) {
      const escaped = await send('GET', spelling, bearer(t.key))
      expect(escaped.status, spelling).toBe(200)
      expect(escaped.json, spelling).toEqual(plain.json)
    }
    expect((await send('GET', '/v1/%73cheduling/publishers', bearer(t.key))).status).toBe(200)
    // An escaped / stays inside its segment, and an escaped % is data: neither reaches another route.
    const slash = await send('GET', '/v1/fhir/r4/Practitioner%2Fx', bearer(t.key))
    expect(slash.status).toBe(404)
    const percent = await send('GET', '/v1/fhir/r4/CodeSystem/%2524lookup', bearer(t.key))
    expect(percent.status).toBe(404)
    // A batch entry routes as the lone request would.
    const batch = await rawRequest(
      t.url,
      'POST',
      '/v1/fhir/r4',
      { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'batch',
        entry: [{ request: { method: 'GET', url: `CodeSystem/%24lookup?${lookup}` } }],
      }),
    )
    expect(batch.json.entry[0].resource).toEqual(plain.json)
  })

  it('logs and counts a spelled path like any request, by its path as sent', async () => {
    // A minute of its own: refused requests are logged as a sample of each minute (and counted all).
    t.setNow(t.now() + 60_000)
    const response = await send('GET', '/V1/scheduling/publishers', bearer(t.key))
    await t.server.flush()
    const minute = Math.floor(t.now() / 60_000)
    expect(
      t.server.live
        .prepare('SELECT count FROM request_tallies WHERE minute = ? AND status = 404 AND path_class = ?')
        .pluck()
        .get(minute, 'api'),
    ).toBe(1)
    const logged = t.server.live
      .prepare('SELECT path, status, org_id FROM request_log WHERE request_id = ?')
      .get(response.headers['x-request-id']) as { path: string; status: number; org_id: number }
    expect(logged).toMatchObject({ path: '/V1/scheduling/publishers', status: 404 })
    expect(logged.org_id).not.toBeNull()
  })
})

describe('the key check comes first under /v1', () => {
  it('answers 401, not 406, to a caller without a key whatever it accepts', async () => {
    const html = await t.get('/v1/scheduling/slots', { accept: 'text/html' })
    expect(html.status).toBe(401)
    expect(html.headers['www-authenticate']).toMatch(/^Bearer realm=/)
    const xml = await t.get('/v1/fhir/r4/metadata?_format=xml')
    expect(xml.status).toBe(401)
    expect(xml.json.issue[0].code).toBe('login')
  })

  it('checks the FHIR release only on the FHIR base', async () => {
    const r5 = { accept: 'application/fhir+json; fhirVersion=5.0' }
    expect((await t.get('/v1/scheduling/publishers', { ...bearer(t.key), ...r5 })).status).toBe(200)
    expect((await t.get('/openapi.json', r5)).status).toBe(200)
    expect((await t.get('/v1/fhir/r4/metadata', { ...bearer(t.key), ...r5 })).status).toBe(406)
  })
})

describe('what Node refuses before the app runs', () => {
  it('answers an unknown method in the spec shape, with a request id, and logs it', async () => {
    t.setNow(t.now() + 60_000)
    const problem = await rawRequest(t.url, 'FOO', '/v1/scheduling/slots', bearer(t.key))
    expect(problem.status).toBe(400)
    expect(problem.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(problem.json).toMatchObject({
      type: `${t.url}/docs/errors#invalid-request`,
      status: 400,
      instance: `urn:uuid:${problem.headers['x-request-id']}`,
    })
    const outcome = await rawRequest(t.url, 'FOO', '/v1/fhir/r4/metadata', bearer(t.key))
    expect(outcome.status).toBe(400)
    expect(outcome.json.resourceType).toBe('OperationOutcome')
    await t.server.flush()
    const logged = t.server.live
      .prepare('SELECT method, path, status FROM request_log WHERE request_id = ?')
      .get(problem.headers['x-request-id'])
    expect(logged).toEqual({ method: 'FOO', path: '/v1/scheduling/slots', status: 400 })
  })

  it('answers a head over 16 KiB with 431 in the spec shape', async () => {
    const long = await rawRequest(t.url, 'GET', `/v1/fhir/r4/metadata?x=${'a'.repeat(17 * 1024)}`)
    expect(long.status).toBe(431)
    expect(long.json.resourceType).toBe('OperationOutcome')
    expect(long.json.issue[0].code).toBe('too-long')
    expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    const header = await rawRequest(t.url, 'GET', '/openapi.json', { 'x-padding': 'b'.repeat(17 * 1024) })
    expect(header.status).toBe(431)
    expect(header.json.type).toBe(`${t.url}/docs/errors#headers-too-large`)
  })
})
