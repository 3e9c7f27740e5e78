import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ApiError } from '../src/http/errors.js'
import { UpstreamSource } from '../src/upstream/client.js'
import { type FakeUpstream, hang, json, type Reply, startFakeUpstream } from './support/fakeUpstream.js'

let fake: FakeUpstream
let base: string

beforeAll(async () => {
  fake = await startFakeUpstream()
  base = fake.base
})
afterAll(() => fake.close())
beforeEach(() => fake.reset())

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
    fake.script(json(200, { resourceType: 'Bundle' }))
    const { upstream, waits } = source()
    const answer = await upstream.fetchJson({ path: 'Practitioner?name=smith' })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ resourceType: 'Bundle' })
    expect(fake.seen[0]?.url).toBe('/fhir/Practitioner?name=smith')
    expect(waits).toEqual([])
  })

  it('posts JSON bodies', async () => {
    fake.script(json(200, { resourceType: 'Parameters' }))
    const { upstream } = source()
    await upstream.fetchJson({ path: 'CodeSystem/$lookup', body: { resourceType: 'Parameters' } })
    expect(fake.seen[0]).toMatchObject({ method: 'POST', body: '{"resourceType":"Parameters"}' })
  })

  it('passes a 404 through as an answer, not a failure', async () => {
    fake.script(json(404, { resourceType: 'OperationOutcome' }))
    const answer = await source().upstream.fetchJson({ path: 'Location/x' })
    expect(answer.status).toBe(404)
  })

  it('retries a failure once after a short wait and returns the second answer', async () => {
    fake.script(json(500, {}), json(200, { ok: true }))
    const { upstream, waits } = source()
    expect((await upstream.fetchJson({ path: 'metadata' })).body).toEqual({ ok: true })
    expect(waits).toEqual([250])
    expect(fake.seen).toHaveLength(2)
  })

  it('answers 502 after two failures, without a third try', async () => {
    fake.script(json(500, {}), json(502, {}))
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(502)
    expect(fake.seen).toHaveLength(2)
  })

  it('answers 502 at once when the source refuses the request', async () => {
    fake.script(json(400, {}))
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(502)
    expect(fake.seen).toHaveLength(1)
  })

  it('treats an unreadable answer as a failure', async () => {
    const garbage: Reply = (_req, res) => res.writeHead(200).end('<html>')
    fake.script(garbage, garbage)
    expect((await failure(source().upstream.fetchJson({ path: 'metadata' }))).status).toBe(502)
  })

  it('waits a Retry-After of 5 s or less, then retries', async () => {
    fake.script(json(429, {}, { 'retry-after': '3' }), json(200, { ok: true }))
    const { upstream, waits } = source()
    expect((await upstream.fetchJson({ path: 'metadata' })).status).toBe(200)
    expect(waits).toEqual([3000])
  })

  it('answers 503 throttled with the source time when it asks for more than 5 s, without retrying', async () => {
    fake.script(json(429, {}, { 'retry-after': '30' }))
    const { upstream, waits } = source()
    const error = await failure(upstream.fetchJson({ path: 'metadata' }))
    expect(error).toMatchObject({ status: 503, fhirCode: 'throttled', headers: { 'Retry-After': '30' } })
    expect(waits).toEqual([])
  })

  it('answers 503 throttled with Retry-After of at least 2 s when throttled twice', async () => {
    fake.script(json(429, {}, { 'retry-after': '1' }), json(429, {}, { 'retry-after': '0' }))
    const error = await failure(source().upstream.fetchJson({ path: 'metadata' }))
    expect(error).toMatchObject({ status: 503, fhirCode: 'throttled', headers: { 'Retry-After': '2' } })
  })

  it('answers 504 when the source does not answer in time, after one retry', async () => {
    fake.script(hang, hang)
    const error = await failure(source({ timeoutMs: 100 }).upstream.fetchJson({ path: 'metadata' }))
    expect(error.status).toBe(504)
    expect(fake.seen).toHaveLength(2)
  })

  it("answers 504 at once when the caller's budget has run out", async () => {
    const { upstream } = source()
    const error = await failure(upstream.fetchJson({ path: 'metadata', signal: AbortSignal.abort() }))
    expect(error.status).toBe(504)
    expect(fake.seen).toHaveLength(0)
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
    expect(fake.seen).toHaveLength(0)
  })
})
