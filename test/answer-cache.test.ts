import { gunzipSync } from 'node:zlib'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { AnswerCache, type PreparedAnswer } from '../src/http/answerCache.js'
import { startTestServer } from './support/harness.js'

const answer = (text: string): PreparedAnswer => ({ status: 200, headers: {}, bytes: Buffer.from(text) })

describe('AnswerCache', () => {
  it('keeps answers within its room, dropping the least recently used first', () => {
    // Each answer takes 100 bytes with its key: the room holds sixteen.
    const cache = new AnswerCache(1600)
    const keys = Array.from({ length: 16 }, (_, index) => String(index).padStart(2, '0'))
    for (const key of keys) cache.set(key, 1, answer(key.repeat(49)))
    expect(cache.size).toBe(16)
    cache.get('00', 1, 0)
    cache.set('16', 1, answer('16'.repeat(49)))
    expect(cache.size).toBe(16)
    expect(cache.get('01', 1, 0)).toBeUndefined()
    expect(cache.get('00', 1, 0)?.bytes.toString()).toBe('00'.repeat(49))
    expect(cache.get('16', 1, 0)?.bytes.toString()).toBe('16'.repeat(49))
  })

  it('does not keep an answer too large for its share of the room', () => {
    const cache = new AnswerCache(1600)
    cache.set('big', 1, answer('x'.repeat(100)))
    expect(cache.get('big', 1, 0)).toBeUndefined()
    cache.set('small', 1, answer('x'.repeat(90)))
    expect(cache.get('small', 1, 0)).toBeDefined()
  })

  it('forgets everything when the database moves on, and never keeps an answer made before', () => {
    const cache = new AnswerCache(1024)
    cache.set('a', 1, answer('1'))
    expect(cache.get('a', 2, 0)).toBeUndefined()
    cache.set('a', 1, answer('stale'))
    expect(cache.get('a', 2, 0)).toBeUndefined()
  })

  it('answers through the moment given, not after', () => {
    const cache = new AnswerCache(1024)
    cache.set('a', 1, answer('1'), 1000)
    expect(cache.get('a', 1, 1000)).toBeDefined()
    expect(cache.get('a', 1, 1001)).toBeUndefined()
    expect(cache.get('a', 1, 0)).toBeUndefined()
  })
})

describe('gzip of answers', () => {
  it('compresses a kept answer once, and one not kept for its own response only', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = answer(JSON.stringify({ slots: 'x'.repeat(2000) }))
    cache.set('kept', 1, kept)
    expect(cache.gzip(kept)).toBe(cache.gzip(kept))
    const other = answer(JSON.stringify({ slots: 'y'.repeat(2000) }))
    const once = cache.gzip(other) as Buffer
    expect(gunzipSync(once)).toEqual(other.bytes)
    expect(cache.gzip(other)).not.toBe(once)
    expect(cache.size).toBe(1)
  })

  it('leaves an answer past 256 KB to the compression middleware', () => {
    expect(new AnswerCache(0).gzip(answer('z'.repeat(300 * 1024)))).toBeUndefined()
  })

  it('sends an answer the cache does not keep gzipped whole, with its length', async () => {
    const server = await startTestServer({ env: { SVC_ANSWER_CACHE_MB: '0' } })
    try {
      const plain = await request(`${server.url}/openapi.json`)
      const expected = await plain.body.text()
      const response = await request(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } })
      expect(response.headers['content-encoding']).toBe('gzip')
      // Compressed on the event loop: the middleware's stream would have sent it chunked, without a length.
      expect(Number(response.headers['content-length'])).toBeGreaterThan(0)
      expect(gunzipSync(Buffer.from(await response.body.arrayBuffer())).toString()).toBe(expected)
    } finally {
      await server.close()
    }
  })

  it('sends a stored resource past 16 KB, and a searchset of them, gzipped whole with its length', async () => {
    const server = await startTestServer({ env: { SVC_ANSWER_CACHE_MB: '0' } })
    try {
      for (const path of [
        '/v1/fhir/r4/Questionnaire/prapare-example',
        '/v1/fhir/r4/Questionnaire?url=http://hl7.org/fhir/us/core/Questionnaire/prapare-example',
      ]) {
        const headers = { authorization: `Bearer ${server.key}` }
        const expected = Buffer.from(
          await (await request(`${server.url}${path}`, { headers })).body.arrayBuffer(),
        )
        expect(expected.length).toBeGreaterThan(16 * 1024)
        const response = await request(`${server.url}${path}`, {
          headers: { ...headers, 'accept-encoding': 'gzip' },
        })
        expect(response.headers['content-encoding']).toBe('gzip')
        expect(Number(response.headers['content-length'])).toBeGreaterThan(0)
        expect(gunzipSync(Buffer.from(await response.body.arrayBuffer())).equals(expected)).toBe(true)
      }
    } finally {
      await server.close()
    }
  })
})
