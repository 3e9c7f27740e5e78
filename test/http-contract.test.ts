import { gunzipSync } from 'node:zlib'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { timeOrderedUuid } from '../src/http/middleware/requestContext.js'
import { API_VERSION } from '../src/version.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
})
afterAll(() => t.close())

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function expectProblem(response: Awaited<ReturnType<TestServer['get']>>, status: number, slug: string) {
  expect(response.status).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(response.json).toMatchObject({
    type: `${t.url}/docs/errors#${slug}`,
    status,
    instance: `urn:uuid:${response.headers['x-request-id']}`,
  })
  expect(typeof response.json.title).toBe('string')
  expect(typeof response.json.detail).toBe('string')
}

function expectOutcome(response: Awaited<ReturnType<TestServer['get']>>, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/fhir\+json/)
  expect(response.json.resourceType).toBe('OperationOutcome')
  expect(response.json.issue[0]).toMatchObject({ code })
  expect(typeof response.json.issue[0].details.text).toBe('string')
}

describe('request ids', () => {
  it('gives every response a fresh UUID, errors included', async () => {
    const a = await t.get('/v1/scheduling/publishers', bearer(t.key))
    const b = await t.get('/nowhere')
    expect(a.headers['x-request-id']).toMatch(UUID)
    expect(b.headers['x-request-id']).toMatch(UUID)
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id'])
  })

  it('echoes a caller UUID in X-Correlation-Id and ignores anything else', async () => {
    const sent = '0b6a0c3e-2f43-4a8e-9d51-2f7d0d5d9a11'
    const echoed = await t.get('/v1/scheduling/publishers', { ...bearer(t.key), 'x-request-id': sent })
    expect(echoed.headers['x-correlation-id']).toBe(sent)
    expect(echoed.headers['x-request-id']).not.toBe(sent)
    const ignored = await t.get('/v1/scheduling/publishers', {
      ...bearer(t.key),
      'x-request-id': 'not-a-uuid',
    })
    expect(ignored.headers['x-correlation-id']).toBeUndefined()
  })

  it('are UUIDv7s carrying their time, so the request log is written in key order', () => {
    const early = timeOrderedUuid(Date.parse('2026-11-21T10:00:00.000Z'))
    const later = timeOrderedUuid(Date.parse('2026-11-21T10:00:00.001Z'))
    for (const id of [early, later])
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(Number.parseInt(early.replace('-', '').slice(0, 12), 16)).toBe(
      Date.parse('2026-11-21T10:00:00.000Z'),
    )
    expect(early < later).toBe(true)
    expect(timeOrderedUuid(1)).not.toBe(timeOrderedUuid(1))
  })
})

describe('authentication', () => {
  const realm = () => `Bearer realm="${new URL(t.url).host}"`

  it('401 without a key says none was sent, with a bare challenge', async () => {
    const response = await t.get('/v1/scheduling/publishers')
    expectProblem(response, 401, 'unauthorized')
    expect(response.json.detail).toMatch(/No API key was sent/)
    expect(response.headers['www-authenticate']).toBe(realm())
  })

  it.each([
    [
      'unknown but well-formed',
      () => `${t.key.slice(0, -1)}${t.key.endsWith('A') ? 'B' : 'A'}`,
      /checksum|unknown/,
    ],
    [
      'a mistyped key (checksum fails)',
      () => t.key.replace(/.(?=.{10}$)/, (c) => (c === 'x' ? 'y' : 'x')),
      /checksum/,
    ],
    ['a truncated key', () => t.key.slice(0, 20), /length|copied/],
    ['a non-svc token', () => 'sk_live_abcdef', /svc_sk_/],
  ])('401 for %s, with error="invalid_token" and no echo of the key', async (_name, make, detail) => {
    const key = make()
    const response = await t.get('/v1/scheduling/publishers', bearer(key))
    expectProblem(response, 401, 'unauthorized')
    expect(response.json.detail).toMatch(/not recognised/)
    expect(response.json.detail).toMatch(detail)
    expect(response.text).not.toContain(key)
    expect(response.headers['www-authenticate']).toBe(`${realm()}, error="invalid_token"`)
  })

  it('accepts x-api-key in place of Authorization', async () => {
    const response = await t.get('/v1/scheduling/publishers', { 'x-api-key': t.key })
    expect(response.status).toBe(200)
    expect(response.json).toEqual({ publishers: [] })
  })

  it('refuses a non-Bearer Authorization scheme as an unrecognised key', async () => {
    const response = await t.get('/v1/scheduling/publishers', {
      authorization: `Basic ${Buffer.from('a:b').toString('base64')}`,
    })
    expectProblem(response, 401, 'unauthorized')
    expect(response.headers['www-authenticate']).toContain('invalid_token')
  })

  it('answers 401 as an OperationOutcome coded login on the FHIR base', async () => {
    const response = await t.get('/v1/fhir/r4/metadata')
    expectOutcome(response, 401, 'login')
    expect(response.headers['www-authenticate']).toBe(realm())
  })

  it('needs a key for OPTIONS under /v1', async () => {
    expectProblem(await t.send('OPTIONS', '/v1/scheduling/publishers'), 401, 'unauthorized')
    const allowed = await t.send('OPTIONS', '/v1/scheduling/publishers', { headers: bearer(t.key) })
    expect(allowed.status).toBe(204)
    expect(allowed.headers.allow).toBe('GET, HEAD, OPTIONS')
    expect(allowed.text).toBe('')
  })

  it('does not need a key outside /v1', async () => {
    expect((await t.get('/openapi.json')).status).toBe(200)
    expect((await t.get('/docs/errors')).status).toBe(200)
  })
})

describe('statuses in both shapes', () => {
  it('404 for unknown paths in the shape of their base', async () => {
    expectProblem(await t.get('/v1/nothing-here', bearer(t.key)), 404, 'not-found')
    expectProblem(await t.get('/nothing-here'), 404, 'not-found')
    expectOutcome(await t.get('/v1/fhir/r4/NoSuchResource', bearer(t.key)), 404, 'not-found')
  })

  it('405 with Allow in both shapes', async () => {
    const problem = await t.send('DELETE', '/v1/scheduling/publishers', { headers: bearer(t.key) })
    expectProblem(problem, 405, 'method-not-allowed')
    expect(problem.headers.allow).toBe('GET, HEAD, OPTIONS')
    const outcome = await t.send('POST', '/v1/fhir/r4/metadata', {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: '{}',
    })
    expectOutcome(outcome, 405, 'not-supported')
    expect(outcome.headers.allow).toBe('GET, HEAD, OPTIONS')
  })

  it('HEAD behaves as GET without a body', async () => {
    const get = await t.get('/v1/scheduling/publishers', bearer(t.key))
    const head = await t.send('HEAD', '/v1/scheduling/publishers', { headers: bearer(t.key) })
    expect(head.status).toBe(200)
    expect(head.text).toBe('')
    expect(head.headers['content-type']).toBe(get.headers['content-type'])
  })

  it('406 when Accept admits no JSON, in both shapes', async () => {
    expectProblem(
      await t.get('/v1/scheduling/publishers', { ...bearer(t.key), accept: 'text/html' }),
      406,
      'not-acceptable',
    )
    expectOutcome(
      await t.get('/v1/fhir/r4/metadata', { ...bearer(t.key), accept: 'application/xml' }),
      406,
      'not-supported',
    )
    expectProblem(
      await t.get('/v1/scheduling/publishers', { ...bearer(t.key), accept: 'application/json;q=0' }),
      406,
      'not-acceptable',
    )
  })

  it.each([
    'application/json',
    'application/fhir+json',
    'application/json+fhir',
    'text/json',
    'application/*',
    '*/*',
  ])('accepts Accept: %s', async (accept) => {
    expect((await t.get('/v1/scheduling/publishers', { ...bearer(t.key), accept })).status).toBe(200)
    expect((await t.get('/v1/fhir/r4/metadata', { ...bearer(t.key), accept })).status).toBe(200)
  })

  it('serves FHIR 4.0 and refuses another release with 406', async () => {
    const r4 = await t.get('/v1/fhir/r4/metadata', {
      ...bearer(t.key),
      accept: 'application/fhir+json; fhirVersion=4.0',
    })
    expect(r4.status).toBe(200)
    const r5 = await t.get('/v1/fhir/r4/metadata', {
      ...bearer(t.key),
      accept: 'application/fhir+json; fhirVersion=5.0',
    })
    expectOutcome(r5, 406, 'not-supported')
  })

  it('lets _format override Accept on the FHIR base, and refuses unserved formats', async () => {
    const overridden = await t.get('/v1/fhir/r4/metadata?_format=json', {
      ...bearer(t.key),
      accept: 'application/xml',
    })
    expect(overridden.status).toBe(200)
    expect(overridden.headers['content-type']).toMatch(/^application\/fhir\+json/)
    const asJson = await t.get('/v1/fhir/r4/metadata?_format=application/json', bearer(t.key))
    expect(asJson.headers['content-type']).toMatch(/^application\/json/)
    expectOutcome(await t.get('/v1/fhir/r4/metadata?_format=xml', bearer(t.key)), 406, 'not-supported')
  })

  it('treats _format as undeclared outside the FHIR base', async () => {
    const response = await t.get('/v1/scheduling/publishers?_format=json', bearer(t.key))
    expectProblem(response, 400, 'invalid-request')
    expect(response.json.issues).toEqual([
      { path: ['_format'], message: expect.stringContaining('Unknown parameter') },
    ])
  })

  it('gzips when Accept-Encoding allows', async () => {
    const { request } = await import('undici')
    const response = await request(`${t.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } })
    expect(response.headers['content-encoding']).toBe('gzip')
    expect(response.headers.vary).toBe('Accept-Encoding')
    const body = JSON.parse(gunzipSync(Buffer.from(await response.body.arrayBuffer())).toString())
    expect(body.openapi).toBe('3.1.0')
    const plain = await request(`${t.url}/openapi.json`)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.headers.vary).toBe('Accept-Encoding')
    expect((JSON.parse(await plain.body.text()) as { openapi: string }).openapi).toBe('3.1.0')
  })
})

describe('strict parameters', () => {
  it('names every undeclared parameter at once and lists the accepted ones', async () => {
    const response = await t.get('/v1/fhir/r4/metadata?foo=1&bar=2', bearer(t.key))
    expectOutcome(response, 400, 'invalid')
    const expressions = response.json.issue.map((issue: { expression: string[] }) => issue.expression[0])
    expect(expressions).toEqual(['foo', 'bar'])
    expect(response.json.issue[0].details.text).toContain('accepted parameters: mode, _format')
  })

  it('refuses a repeated parameter', async () => {
    const response = await t.get('/v1/fhir/r4/metadata?_format=json&_format=json', bearer(t.key))
    expectOutcome(response, 400, 'invalid')
    expect(response.json.issue[0].expression).toEqual(['_format'])
    expect(response.json.issue[0].details.text).toMatch(/repeated/)
  })

  it('names the parameter at fault in words, not by a schema path', async () => {
    const messages = async (query: string) => {
      const response = await t.get(`/v1/scheduling/slots?${query}`, bearer(t.key))
      expectProblem(response, 400, 'invalid-request')
      return response.json.issues.map((issue: { message: string }) => issue.message)
    }
    expect(await messages('offset=9007199254740992&npi=1234567890,123')).toEqual([
      '"npi" must list ten-digit NPIs (got "1234567890,123")',
      '"offset" must be an integer from 0 to 9007199254740991 (got "9007199254740992")',
    ])
    const lookup = await t.get(
      '/v1/fhir/r4/CodeSystem/$lookup?system=urn:x&code=a&property=display&property=',
      bearer(t.key),
    )
    expectOutcome(lookup, 400, 'invalid')
    expect(lookup.json.issue[0].details.text).toBe('"property" (value 2) must not be empty (got "display, ")')
  })

  it('gives problem issues with path and message outside the FHIR base', async () => {
    const response = await t.get('/v1/scheduling/publishers?a=1&b=2', bearer(t.key))
    expectProblem(response, 400, 'invalid-request')
    expect(response.json.issues.map((issue: { path: string[] }) => issue.path)).toEqual([['a'], ['b']])
    expect(response.json.issues[0].message).toMatch(/this path takes no parameters/)
  })
})

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document listing every registered endpoint', async () => {
    const response = await t.get('/openapi.json')
    expect(response.json.info.version).toBe(API_VERSION)
    const validator = new Validator()
    const result = await validator.validate(response.json)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
    const operations = Object.entries(response.json.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    )
    const registered = t.server.routes.endpoints
    expect(operations.sort()).toEqual(
      registered.map((e) => `${e.method} ${e.path.replace(/:(\w+)/g, '{$1}')}`).sort(),
    )
  })

  it('sends Cache-Control, a strong ETag and 304 on If-None-Match', async () => {
    const first = await t.get('/openapi.json')
    expect(first.headers['cache-control']).toBe('public, max-age=300')
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const again = await t.get('/openapi.json', { 'if-none-match': first.headers.etag as string })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
  })
})

describe('/v1/fhir/r4/metadata', () => {
  it('is a CapabilityStatement with ETag, private caching and 304', async () => {
    const first = await t.get('/v1/fhir/r4/metadata', bearer(t.key))
    expect(first.json).toMatchObject({
      resourceType: 'CapabilityStatement',
      fhirVersion: '4.0.1',
      kind: 'instance',
    })
    expect(first.headers['cache-control']).toBe('private, max-age=300')
    const again = await t.get('/v1/fhir/r4/metadata', {
      ...bearer(t.key),
      'if-none-match': first.headers.etag as string,
    })
    expect(again.status).toBe(304)
  })
})

describe('/docs/errors', () => {
  it('has an anchor for every problem slug', async () => {
    const page = await t.get('/docs/errors', { accept: 'text/html' })
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    for (const slug of [
      'invalid-request',
      'unauthorized',
      'not-found',
      'method-not-allowed',
      'not-acceptable',
      'unsupported-media-type',
      'rate-limited',
      'server-error',
      'unavailable',
    ]) {
      expect(page.text).toContain(`id="${slug}"`)
    }
  })
})

describe('conditional requests and connections', () => {
  it.each(['/openapi.json', '/v1/fhir/r4/metadata'])(
    '%s answers 304 to a matching If-None-Match even with no-cache, for lists, * and weak tags',
    async (path) => {
      const first = await t.get(path, bearer(t.key))
      const tag = first.headers.etag as string
      for (const headers of <Record<string, string>[]>[
        { 'if-none-match': tag, 'cache-control': 'no-cache' },
        { 'if-none-match': tag, pragma: 'no-cache' },
        { 'if-none-match': `"other", ${tag}` },
        { 'if-none-match': `W/${tag}` },
        { 'if-none-match': '*' },
      ]) {
        const again = await t.get(path, { ...bearer(t.key), ...headers })
        expect(again.status, JSON.stringify(headers)).toBe(304)
      }
      expect((await t.get(path, { ...bearer(t.key), 'if-none-match': '"other"' })).status).toBe(200)
    },
  )

  it('gives the gzip and identity forms different strong tags, and either revalidates', async () => {
    const plain = await t.get('/openapi.json')
    const gzipped = await t.get('/openapi.json', { 'accept-encoding': 'gzip' })
    expect(gzipped.headers['content-encoding']).toBe('gzip')
    expect(gzipped.headers.etag).not.toBe(plain.headers.etag)
    for (const tag of [plain.headers.etag, gzipped.headers.etag] as string[]) {
      expect((await t.get('/openapi.json', { 'if-none-match': tag })).status).toBe(304)
      expect((await t.get('/openapi.json', { 'if-none-match': tag, 'accept-encoding': 'gzip' })).status).toBe(
        304,
      )
    }
  })

  it('keeps idle connections longer than common proxies, with the headers timeout above it', () => {
    const { server } = t.server
    expect(server.keepAliveTimeout).toBeGreaterThan(60_000)
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout)
  })
})
