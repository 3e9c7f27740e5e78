import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../bench/lib/random.js'
import { importTerminology } from '../src/terminology/import/importFiles.js'
import { importPlanNet } from './support/directory.js'
import { NUCC_CSV } from './support/fixtures.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { rawRequest } from './support/rawHttp.js'

/**
 * Every parameter of every path in /openapi.json, fed what a hostile caller sends (control characters, lone
 * surrogates, malformed escapes, very long values, every parameter at once): no answer is a 5xx.
 */
let t: TestServer
let operations: { method: string; path: string; params: string[] }[]

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importPlanNet(t)
  await importTerminology(t.server.db, [NUCC_CSV], { release: 'fuzz', now: t.now() })
  const openapi = (await t.get('/openapi.json')).json
  operations = Object.entries(
    openapi.paths as Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>,
  ).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, 'x%00y'),
      params: (operation.parameters ?? []).filter((param) => param.in === 'query').map((param) => param.name),
    })),
  )
}, 120_000)
afterAll(() => t.close())

const HOSTILE = [
  '%00',
  'a%01b',
  '%1F',
  '%7F',
  '%ZZ',
  '%',
  'a%2',
  '%ED%A0%80',
  '%F0%9F',
  '%C3%28',
  encodeURIComponent('x'.repeat(6000)),
  encodeURIComponent('"\'<>{}[]|\\^`'),
  encodeURIComponent('system|code|more'),
  '..%2F..%2Fetc%2Fpasswd',
  '-1',
  '1e309',
  encodeURIComponent('a*:"b" NEAR(c) OR d'),
]

const send = (method: string, path: string, query: string) =>
  rawRequest(
    t.url,
    method,
    query ? `${path}?${query}` : path,
    method === 'POST' ? { ...bearer(t.key), 'content-type': 'application/fhir+json' } : bearer(t.key),
    method === 'POST' ? '{"resourceType":"Parameters","parameter":[]}' : undefined,
  )

describe('hostile parameter values', () => {
  it('never get a 5xx, one parameter at a time', async () => {
    const failures: string[] = []
    for (const { method, path, params } of operations) {
      for (const name of params) {
        for (const value of HOSTILE) {
          const response = await send(method, path, `${name}=${value}`)
          if (response.status >= 500)
            failures.push(`${method} ${path}?${name}=${value.slice(0, 40)} -> ${response.status}`)
        }
      }
    }
    expect(failures).toEqual([])
  })

  it('never get a 5xx, every parameter at once with random hostile values, and a 1 MB value', async () => {
    const random = seededRandom(24)
    const failures: string[] = []
    for (const { method, path, params } of operations) {
      for (let round = 0; round < 10; round++) {
        const query = params
          .map((name) => `${name}=${HOSTILE[Math.floor(random() * HOSTILE.length)] as string}`)
          .join('&')
        const response = await send(method, path, query)
        if (response.status >= 500)
          failures.push(`${method} ${path}?${query.slice(0, 80)} -> ${response.status}`)
      }
      const huge = await send(method, path, `${params[0] ?? 'x'}=${'a'.repeat(1024 * 1024)}`)
      if (huge.status >= 500) failures.push(`${method} ${path} with a 1 MB value -> ${huge.status}`)
    }
    expect(failures).toEqual([])
  })

  it('never get a 5xx in a Parameters body: control characters, lone surrogates, wrong types', async () => {
    const failures: string[] = []
    const values = [
      { valueString: 'a\u0000b' },
      { valueString: '\ud800' },
      { valueCode: '\u001f' },
      { valueUri: 'http://x/%ZZ' },
      { valueInteger: 1e309 },
      { valueCoding: { system: 'a\u0001', code: '\udc00' } },
      { valueCodeableConcept: { coding: [{ system: 'x', code: '\u0000' }] } },
      { valueString: null },
    ]
    for (const { path, params } of operations.filter((operation) => operation.method === 'POST')) {
      for (const name of [...params, 'url', 'code', 'system', 'coding', 'codeableConcept']) {
        for (const value of values) {
          const body = JSON.stringify({ resourceType: 'Parameters', parameter: [{ name, ...value }] })
          const response = await rawRequest(
            t.url,
            'POST',
            path,
            { ...bearer(t.key), 'content-type': 'application/fhir+json' },
            body,
          )
          if (response.status >= 500)
            failures.push(`POST ${path} ${body.slice(0, 100)} -> ${response.status}`)
        }
      }
    }
    expect(failures).toEqual([])
  })
})
