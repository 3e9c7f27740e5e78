import { describe, expect, it } from 'vitest'
import { RawJson, stringify } from '../src/rawJson.js'

describe('JSON kept as its text (RawJson)', () => {
  const location = { name: 'Clinic "A" \u00e9', address: { line: ['1 Main St'], city: 'Boston' }, lat: 42.1 }
  const provider = { npi: '1234567890', name: ['Ann', 'Lee'] }
  const plain = { id: 'x', location, provider, list: [location, null, 3], note: 'ok' }
  const withRaw = {
    id: 'x',
    location: new RawJson(JSON.stringify(location)),
    provider: new RawJson(JSON.stringify(provider)),
    list: [new RawJson(JSON.stringify(location)), null, 3],
    note: 'ok',
  }

  it('is spliced in as its text where stringify serializes it, anywhere in the value, in order', () => {
    expect(stringify(withRaw)).toBe(JSON.stringify(plain))
    expect(stringify([withRaw, withRaw])).toBe(JSON.stringify([plain, plain]))
  })

  it('serializes as its parsed value anywhere else', () => {
    expect(JSON.stringify(withRaw)).toBe(JSON.stringify(plain))
  })

  it('leaves strings that look like its mark as they are', () => {
    const lookalike = { text: '\uE000not-a-mark\uE000', raw: new RawJson('{"a":1}'), empty: '' }
    expect(stringify(lookalike)).toBe('{"text":"\uE000not-a-mark\uE000","raw":{"a":1},"empty":""}')
    expect(stringify({ none: 1 })).toBe('{"none":1}')
  })
})
