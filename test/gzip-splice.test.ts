import { crc32, gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { AnswerCache, type PreparedAnswer } from '../src/http/answerCache.js'
import {
  crc32Combine,
  deflatedPart,
  type Precompressed,
  spliceableGzip,
  spliceGzip,
  spliceGzipOf,
} from '../src/http/gzipSplice.js'
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

describe('gzip spliced from precompressed pieces', () => {
  it("combines CRC-32s as zlib's crc32_combine does, whatever the lengths", () => {
    for (const [a, b] of [
      [0, 0],
      [1, 1],
      [3, 70_000],
      [70_000, 3],
      [0, 9],
      [9, 0],
      [1_700_000, 170_000],
    ]) {
      const first = Buffer.alloc(a as number, 'ab✓')
      const second = Buffer.alloc(b as number, 'cd')
      expect(crc32Combine(crc32(first), crc32(second), second.length)).toBe(
        crc32(Buffer.concat([first, second])),
      )
    }
  })

  it('unpacks to the pieces in order, its CRC made from the kept ones', () => {
    const kept = (bytes: Buffer): Precompressed => ({
      crc: crc32(bytes),
      length: bytes.length,
      ...deflatedPart(spliceableGzip(bytes)),
    })
    const texts = [Buffer.from('{"entry":['), json(40), Buffer.from(','), json(300), Buffer.from(']}')]
    const pieces = texts.map((text, index) => (index % 2 === 1 ? kept(text) : text))
    expect(gunzipSync(spliceGzipOf(pieces))).toEqual(Buffer.concat(texts))
    // Its trailer comes from the kept CRCs: a piece whose bytes are not the ones kept compressed shows it.
    const lying = pieces.map((piece) => (Buffer.isBuffer(piece) ? piece : { ...piece, crc: piece.crc ^ 1 }))
    expect(() => gunzipSync(spliceGzipOf(lying))).toThrow()
  })
})

describe('AnswerCache.gzip', () => {
  const prepared = (bytes: Buffer): PreparedAnswer => ({
    status: 200,
    headers: {},
    bytes,
    length: bytes.length,
  })
  const spliced = (pieces: (string | PreparedAnswer)[]) => {
    const json = new SplicedJson(pieces)
    return { json, answer: { ...prepared(json.bytes), splicedFrom: json.splicedFrom } }
  }

  it('splices an answer from the gzip forms of kept answers given again, made once each', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = [prepared(json(10)), prepared(json(20)), prepared(json(15))] as const
    kept.forEach((answer, index) => cache.set(`k${index}`, 1, answer))
    cache.get('k0', 1, 0)
    cache.get('k1', 1, 0)
    const fresh = prepared(json(30))
    const { json: whole, answer } = spliced([
      '[',
      kept[0],
      ',',
      fresh,
      ',',
      kept[1],
      ',',
      kept[2],
      ',',
      kept[0],
      ']',
    ])
    expect(JSON.parse(whole.bytes.toString())).toEqual(
      [kept[0], fresh, kept[1], kept[2], kept[0]].map((part) => JSON.parse(part.bytes.toString())),
    )
    const gzip = cache.gzip(answer) as Buffer
    expect(gunzipSync(gzip)).toEqual(whole.bytes)
    // The forms spliced in are those the answers alone are given, made once.
    const first = cache.gzip(kept[0]) as Buffer
    expect(cache.gzip(kept[0])).toBe(first)
    expect(gzip.includes(deflatedPart(first).deflated)).toBe(true)
    expect(gzip.includes(deflatedPart(cache.gzip(kept[1]) as Buffer).deflated)).toBe(true)
    // Kept but never given again: stored, its form not made for the splice (made when asked for alone).
    expect(gzip.includes(kept[2].bytes)).toBe(true)
    expect(gzip.includes(fresh.bytes)).toBe(true)
    // Not kept: compressed for its own response each time, nothing kept with it.
    expect(gunzipSync(cache.gzip(fresh) as Buffer)).toEqual(fresh.bytes)
    expect(cache.gzip(fresh)).not.toBe(cache.gzip(fresh))
  })

  it('leaves an answer mostly not compressed alone to the compression middleware', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = prepared(json(10))
    cache.set('k', 1, kept)
    cache.get('k', 1, 0)
    const large = prepared(Buffer.from(JSON.stringify('y'.repeat(20_000))))
    expect(cache.gzip(spliced(['[', kept, ',', large, ']']).answer)).toBeUndefined()
    // Kept, but answered once only: not worth compressing alone.
    const once = prepared(Buffer.from(JSON.stringify('z'.repeat(20_000))))
    cache.set('once', 1, once)
    expect(cache.gzip(spliced(['[', kept, ',', once, ']']).answer)).toBeUndefined()
    cache.get('once', 1, 0)
    expect(gunzipSync(cache.gzip(spliced(['[', kept, ',', once, ']']).answer) as Buffer).toString()).toBe(
      `[${kept.bytes},${once.bytes}]`,
    )
  })
})
