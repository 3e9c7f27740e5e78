import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { entryTarget } from '../src/fhir/batch.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
})
afterAll(() => t.close())

const post = (body: string, contentType = 'application/fhir+json') =>
  t.send('POST', '/v1/fhir/r4', { headers: { ...bearer(t.key), 'content-type': contentType }, body })

const batch = (entries: unknown[], type = 'batch') =>
  post(JSON.stringify({ resourceType: 'Bundle', type, entry: entries }))

describe('FHIR batch', () => {
  it('answers each entry as the same request alone would, in order, independently', async () => {
    const requests = [
      { method: 'GET', url: 'metadata' },
      { method: 'GET', url: 'metadata?unknown=1&other=2' },
      { method: 'GET', url: 'NoSuchResource/1' },
      { method: 'POST', url: 'metadata' },
      { method: 'GET', url: 'metadata?_format=json&_format=json' },
    ]
    const response = await batch(requests.map((request) => ({ request })))
    expect(response.status).toBe(200)
    expect(response.json).toMatchObject({ resourceType: 'Bundle', type: 'batch-response' })
    expect(response.json.entry).toHaveLength(requests.length)
    for (const [index, request] of requests.entries()) {
      const alone = await t.send(request.method, `/v1/fhir/r4/${request.url}`, {
        headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
        body: request.method === 'POST' ? '{}' : undefined,
      })
      const entry = response.json.entry[index]
      expect(entry.response.status.split(' ')[0]).toBe(String(alone.status))
      expect(entry.resource).toEqual(alone.json)
    }
    expect(response.json.entry[3].resource.issue[0].details.text).toMatch(
      /allowed methods: GET, HEAD, OPTIONS/,
    )
  })

  it('counts once against the plan', async () => {
    const count = async () => {
      await t.server.flush()
      return t.server.live
        .prepare("SELECT count FROM usage_counters WHERE period = 'M:2026-11'")
        .pluck()
        .get() as number
    }
    const before = await count()
    await batch(Array.from({ length: 20 }, () => ({ request: { method: 'GET', url: 'metadata' } })))
    expect(await count()).toBe(before + 1)
  })

  it('refuses $reconcile-medications, nested batches and paths off the base by entry, not the whole batch', async () => {
    const response = await batch([
      { request: { method: 'POST', url: 'Patient/$reconcile-medications' } },
      { request: { method: 'POST', url: '' } },
      { request: { method: 'GET', url: 'metadata' } },
      { request: { method: 'POST', url: '/' } },
      { request: { method: 'GET', url: '../../scheduling/specialties?x=1' } },
      { request: { method: 'GET', url: 'http://elsewhere/v1/fhir/r4/metadata' } },
      { request: { method: 'GET', url: 'Patient/$reconcile-medications?x=1' } },
    ])
    const statuses = response.json.entry.map(
      (entry: { response: { status: string } }) => entry.response.status,
    )
    expect(statuses).toEqual([
      '400 Bad Request',
      '400 Bad Request',
      '200 OK',
      '400 Bad Request',
      '404 Not Found',
      '404 Not Found',
      '400 Bad Request',
    ])
    expect(response.json.entry[0].resource.issue[0].details.text).toMatch(/\$reconcile-medications/)
    expect(response.json.entry[3].resource.issue[0].details.text).toMatch(/another batch/)
    expect(response.json.entry[4].resource.issue[0].details.text).toContain(
      '../../scheduling/specialties?x=1',
    )
    expect(response.json.entry[6].resource.issue[0].details.text).toMatch(/\$reconcile-medications/)
  })

  it('reads an entry url written from the root as that path when it names the base', async () => {
    const response = await batch([
      { request: { method: 'GET', url: '/v1/fhir/r4/metadata?_format=json' } },
      { request: { method: 'GET', url: '/metadata' } },
      { request: { method: 'POST', url: '/v1/fhir/r4' } },
    ])
    const entries = response.json.entry
    expect(entries.map((entry: { response: { status: string } }) => entry.response.status)).toEqual([
      '200 OK',
      '200 OK',
      '400 Bad Request',
    ])
    expect(entries[0].resource.resourceType).toBe('CapabilityStatement')
    expect(entries[2].resource.issue[0].details.text).toMatch(/another batch/)
  })

  it('refuses transaction bundles, more than 100 entries, and non-bundles', async () => {
    const transaction = await batch([], 'transaction')
    expect(transaction.status).toBe(400)
    expect(transaction.json.issue[0].code).toBe('not-supported')
    const tooMany = await batch(
      Array.from({ length: 101 }, () => ({ request: { method: 'GET', url: 'metadata' } })),
    )
    expect(tooMany.status).toBe(400)
    expect(tooMany.json.issue[0].code).toBe('too-long')
    const notBundle = await post('{"resourceType":"Parameters"}')
    expect(notBundle.status).toBe(400)
    const notJson = await post('{"resourceType":')
    expect(notJson.status).toBe(400)
    expect(notJson.json.issue[0].expression).toEqual(['body'])
  })

  it('answers 413 too-long past 1 MiB and 415 for a non-JSON or non-UTF-8 body, as OperationOutcomes', async () => {
    const big = JSON.stringify({
      resourceType: 'Bundle',
      type: 'batch',
      entry: [],
      pad: 'x'.repeat(1024 * 1024),
    })
    const tooLarge = await post(big)
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.headers['content-type']).toMatch(/^application\/fhir\+json/)
    expect(tooLarge.json.issue[0].code).toBe('too-long')
    const wrongType = await post('{}', 'text/plain')
    expect(wrongType.status).toBe(415)
    expect(wrongType.json.issue[0].code).toBe('not-supported')
    const utf16 = Buffer.from('\ufeff{"resourceType":"Bundle","type":"batch","entry":[]}', 'utf16le')
    const wrongCharset = await t.send('POST', '/v1/fhir/r4', {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json; charset=utf-16' },
      body: utf16,
    })
    expect(wrongCharset.status).toBe(415)
    expect(wrongCharset.json.issue[0].details.text).toBe(
      'The body must be JSON in UTF-8; got charset=utf-16.',
    )
    const empty = JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [] })
    expect((await post(empty, 'application/fhir+json; charset=UTF-8')).status).toBe(200)
    expect((await post(empty, 'application/json;charset="utf8"')).status).toBe(200)
  })

  it('reads a body sent compressed (gzip, deflate, br), bounded by its decompressed size', async () => {
    const body = JSON.stringify({
      resourceType: 'Bundle',
      type: 'batch',
      entry: [{ request: { method: 'GET', url: 'metadata' } }],
    })
    const send = (coding: string, bytes: string | Buffer) =>
      t.send('POST', '/v1/fhir/r4', {
        headers: {
          ...bearer(t.key),
          'content-type': 'application/fhir+json',
          'content-encoding': coding,
        },
        body: bytes,
      })
    for (const [coding, bytes] of [
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['br', brotliCompressSync(body)],
      ['GZip', gzipSync(body)],
      ['identity', body],
    ] as const) {
      const answer = await send(coding, bytes)
      expect(answer.status, coding).toBe(200)
      expect(answer.json.entry[0].resource.resourceType, coding).toBe('CapabilityStatement')
    }

    const unknown = await send('zstd', body)
    expect(unknown.status).toBe(415)
    expect(unknown.json.issue[0].code).toBe('not-supported')
    expect(unknown.headers['accept-encoding']).toBe('gzip, deflate, br')
    const notGzip = await send('gzip', body)
    expect(notGzip.status).toBe(400)
    expect(notGzip.json.issue[0]).toMatchObject({
      expression: ['body'],
      details: { text: 'The body is not valid gzip data' },
    })
    // 40 MB of zeros in 40 KB of gzip: refused as it inflates, never buffered whole.
    const bomb = await send('gzip', gzipSync(Buffer.alloc(40 * 1024 * 1024)))
    expect(bomb.status).toBe(413)
    expect(bomb.json.issue[0].code).toBe('too-long')
    expect((await send('gzip', gzipSync(body))).status).toBe(200)
  })

  it('takes no query parameters but _format', async () => {
    const response = await t.send('POST', '/v1/fhir/r4?foo=1', {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [] }),
    })
    expect(response.status).toBe(400)
    expect(response.json.issue[0].expression).toEqual(['foo'])
  })

  it('is listed in the CapabilityStatement', async () => {
    const statement = (await t.get('/v1/fhir/r4/metadata', bearer(t.key))).json
    expect(statement.rest[0].interaction).toContainEqual({ code: 'batch' })
  })
})

describe('entryTarget', () => {
  it('keeps the path as a lone request to the same URL would send it, and the raw query', () => {
    const base = 'http://svc.example'
    expect(entryTarget('CodeSystem/$lookup?system=http://x&code=a+b#frag?no', base)).toEqual({
      path: '/v1/fhir/r4/CodeSystem/$lookup',
      query: 'system=http://x&code=a+b',
    })
    expect(entryTarget('/Location/./1/../2?', base)).toEqual({
      path: '/v1/fhir/r4/Location/./1/../2',
      query: '',
    })
    expect(entryTarget('Practitioner/%2e%2e', base)).toEqual({
      path: '/v1/fhir/r4/Practitioner/%2e%2e',
      query: '',
    })
    expect(entryTarget('?_format=json', base)).toEqual({ path: '/v1/fhir/r4/', query: '_format=json' })
    expect(entryTarget(`${base}/v1/fhir/r4/metadata?a=1`, base)).toEqual({
      path: '/v1/fhir/r4/metadata',
      query: 'a=1',
    })
    // Written from the root, the base's own path is that path; another leading slash is relative to the base.
    expect(entryTarget('/v1/fhir/r4/metadata?a=1', base)).toEqual({
      path: '/v1/fhir/r4/metadata',
      query: 'a=1',
    })
    expect(entryTarget('/v1/fhir/r4', base)).toEqual({ path: '/v1/fhir/r4/', query: '' })
    expect(entryTarget('/metadata', base)).toEqual({ path: '/v1/fhir/r4/metadata', query: '' })
    expect(entryTarget('/v1/fhir/r40/metadata', base)).toEqual({
      path: '/v1/fhir/r4/v1/fhir/r40/metadata',
      query: '',
    })
    for (const outside of [
      '../../../v1/other?a=1',
      '../%2e%2e/scheduling',
      'http://elsewhere/v1/fhir/r4/metadata',
      `${base}/v1/fhir/r40`,
    ])
      expect(entryTarget(outside, base)).toBeUndefined()
  })
})
