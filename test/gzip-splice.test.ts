import { gunzipSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { AnswerCache, type PreparedAnswer } from '../src/http/answerCache.js'
import { deflatedPart, spliceableGzip, spliceGzip } from '../src/http/gzipSplice.js'
import { SplicedJson } from '../src/http/json.js'

const json = (index: number) =>
  Buffer.from(JSON.stringify({ resourceType: 'Parameters', index, text: `é ✓ ${'word '.repeat(index * 7)}` }))

describe('gzip splicing', () => {
  it('makes a gzip member that unpacks to the bytes, alone or spliced among stored ones', () => {
    const parts = [json(1), json(40), Buffer.alloc(0), json(300)] as const
    for (const part of parts) expect(gunzipSync(spliceableGzip(part))).toEqual(part)
    // Stored text longer than one stored block (64 KiB), empty text, and parts back to back.
    const long = Buffer.from('x'.repeat(70_000) + '"ü"')
    const pieces = [long, parts[0], Buffer.from(''), parts[1], parts[2], Buffer.from(','), parts[3], long]
    const whole = Buffer.concat(pieces)
    const gzip = spliceGzip(
      whole,
      pieces.map((piece, index) => (index % 2 === 1 ? deflatedPart(spliceableGzip(piece)) : piece)),
    )
    expect(gunzipSync(gzip)).toEqual(whole)
    // Smaller than the whole sent stored: the spliced parts are compressed.
    expect(gzip.length).toBeLessThan(whole.length - parts[3].length / 2)
  })
})

describe('AnswerCache.gzip', () => {
  const prepared = (bytes: Buffer): PreparedAnswer => ({ status: 200, headers: {}, bytes })

  it('splices an answer made of kept answers from their gzip forms, made once each', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = [prepared(json(10)), prepared(json(20))] as const
    kept.forEach((answer, index) => cache.set(`k${index}`, 1, answer))
    const fresh = prepared(json(30))
    const spliced = new SplicedJson(['[', kept[0], ',', fresh, ',', kept[1], ',', kept[0], ']'])
    const answer: PreparedAnswer = { ...prepared(spliced.bytes), splicedFrom: spliced.splicedFrom }
    const gzip = cache.gzip(answer) as Buffer
    expect(gunzipSync(gzip)).toEqual(spliced.bytes)
    expect(JSON.parse(spliced.bytes.toString())).toEqual(
      [kept[0], fresh, kept[1], kept[0]].map((part) => JSON.parse(part.bytes.toString())),
    )
    // The kept answers' own forms are the ones spliced in, made once.
    const first = cache.gzip(kept[0]) as Buffer
    expect(cache.gzip(kept[0])).toBe(first)
    expect(gzip.includes(deflatedPart(first).deflated)).toBe(true)
    expect(cache.gzip(fresh)).toBeUndefined()
  })

  it('leaves an answer mostly not kept to the compression middleware', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = prepared(json(10))
    cache.set('k', 1, kept)
    const large = prepared(Buffer.from(JSON.stringify('y'.repeat(20_000))))
    const spliced = new SplicedJson(['[', kept, ',', large, ']'])
    expect(cache.gzip({ ...prepared(spliced.bytes), splicedFrom: spliced.splicedFrom })).toBeUndefined()
    // The whole compressed at once is what such an answer gets instead.
    expect(gunzipSync(gzipSync(spliced.bytes))).toEqual(spliced.bytes)
  })
})
