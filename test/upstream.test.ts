import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ApiError } from '../src/http/errors.js'
import { UpstreamSource } from '../src/upstream/client.js'

type Reply = (req: IncomingMessage, res: ServerResponse) => void

/** A fake remote FHIR server answering from a queue of scripted replies, one per request. */
let replies: Reply[] = []
let seen: { method: string; url: string; body: string }[] = []
let server: Server
let base: string

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body })
      const reply = replies.shift()
      if (reply) reply(req, res)
      else res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/fhir`
})
afterAll(() => {
  server.closeAllConnections()
  return new Promise<void>((resolve) => server.close(() => resolve()))
})
beforeEach(() => {
  replies = []
  seen = []
})

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers }).end(JSON.stringify(body))

function source(options: { timeoutMs?: number } = {}) {
  const waits: number[] = []
  const upstream = new UpstreamSource({
    baseUrl: base,
    name: 'the test source',
    timeoutMs: options.timeoutMs ?? 2_000,
    sleep: async (ms) => {
      waits.push(ms)
    },
  })
  return { upstream, waits }
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ApiError)
  return error as ApiError
}

describe('upstream source', () => {
  it('returns a 2xx answer and resolves paths against the base', async () => {
    replies = [json(200, { resourceType: 'Bundle' })]
    const { upstream, waits } = source()
    const answer = await upstream.fetchJson({ path: 'Practitioner?name=smith' })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ resourceType: 'Bundle' })
    expect(seen[0]?.url).toBe('/fhir/Practitioner?name=smith')
    expect(waits).toEqual([])
  })

  it('posts JSON bodies', async () => {
    replies = [json(200, { resourceType: 'Parameters' })]
    const { upstream } = source()
    await upstream.fetchJson({ path: 'CodeSystem/$lookup', body: { resourceType: 'Parameters' } })
    expect(seen[0]).toMatchObject({ method: 'POST', body: '{"resourceType":"Parameters"}' })
  })

  it('passes a 404 through as an answer, not a failure', async () => {
    replies = [json(404, { resourceType: 'OperationOutcome' })]
    const answer = await source().upstream.fetchJson({ path: 'Location/x' })
    expect(answer.status).toBe(404)
  })

  it('retries a failure once after a short wait and returns the second answer', async () => {
    replies = [json(500, {}), json(200, { ok: true })]
    const { upstream, waits } = source()
    expect((await upstream.fetchJson({ path: 'metadata' })).body).toEqual({ ok: true })
    expect(waits).toEqual([250])
    expect(seen).toHaveLength(2)
  })

  it('answers 502 after two failures, without a third try', async () => {
    replies = [json(500, {}), json(502, {})]
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(502)
    expect(seen).toHaveLength(2)
  })

  it('answers 502 at once when the source refuses the request', async () => {
    replies = [json(400, {})]
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(502)
    expect(seen).toHaveLength(1)
  })

  it('treats an unreadable answer as a failure', async () => {
    const garbage: Reply = (_req, res) => res.writeHead(200).end('<html>')
    replies = [garbage, garbage]
    expect((await failure(source().upstream.fetchJson({ path: 'metadata' }))).status).toBe(502)
  })

  it('waits a Retry-After of 5 s or less, then retries', async () => {
    replies = [json(429, {}, { 'retry-after': '3' }), json(200, { ok: true })]
    const { upstream, waits } = source()
    expect((await upstream.fetchJson({ path: 'metadata' })).status).toBe(200)
    expect(waits).toEqual([3000])
  })

  it('answers 503 throttled with the source time when it asks for more than 5 s, without retrying', async () => {
    replies = [json(429, {}, { 'retry-after': '30' })]
    const { upstream, waits } = source()
    const error = await failure(upstream.fetchJson({ path: 'metadata' }))
    expect(error).toMatchObject({ status: 503, fhirCode: 'throttled', headers: { 'Retry-After': '30' } })
    expect(waits).toEqual([])
  })

  it('answers 503 throttled with Retry-After of at least 2 s when throttled twice', async () => {
    replies = [json(429, {}, { 'retry-after': '1' }), json(429, {}, { 'retry-after': '0' })]
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error).toMatchObject({ status: 503, fhirCode: 'throttled', headers: { 'Retry-After': '2' } })
  })

  it('answers 504 when the source does not answer in time, after one retry', async () => {
    const silent: Reply = () => undefined
    replies = [silent, silent]
    const error = await failure(source({ timeoutMs: 100 }).upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(504)
    expect(seen).toHaveLength(2)
  })

  it("answers 504 at once when the caller's budget has run out", async () => {
    const { upstream } = source()
    const error = await failure(upstream.fetchJson({ path: 'metadata', signal: AbortSignal.abort() }))
    expect(error.status).toBe(504)
    expect(seen).toHaveLength(0)
  })

  it('answers 502 when the source cannot be reached', async () => {
    const unreachable = new UpstreamSource({
      baseUrl: 'http://127.0.0.1:9/fhir',
      name: 'the test source',
      sleep: async () => undefined,
    })
    expect((await failure(unreachable.fetchJson({ path: 'metadata' }))).status).toBe(502)
  })

  it('refuses a link that leaves the source', async () => {
    const { upstream } = source()
    expect((await failure(upstream.fetchJson({ path: 'http://elsewhere.example/x' }))).status).toBe(502)
    expect(seen).toHaveLength(0)
  })
})
