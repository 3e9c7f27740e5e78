import { describe, expect, it } from 'vitest'
import { AnswerCache, type PreparedAnswer } from '../src/http/answerCache.js'

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
