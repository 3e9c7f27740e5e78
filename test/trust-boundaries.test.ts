import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { addPublisher } from '../src/scheduling/publishers.js'
import { CursorCodec } from '../src/fhir/cursor.js'
import { throttledErrorLog } from '../src/http/errorLog.js'
import { oneLine, runCli } from './support/cli.js'
import { type FakeUpstream, hang, json, startFakeUpstream } from './support/fakeUpstream.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { SMART_EXAMPLES } from './support/fixtures.js'
import { rawRequest } from './support/rawHttp.js'

/**
 * What the operator configured (source URLs, upstream keys, local paths) never reaches a caller; upstream
 * requests stay on the configured base and within bounds; traffic from anyone who can reach the port costs
 * almost nothing. A fake upstream on loopback logs what it receives.
 */
let fake: FakeUpstream
let logged: string[] = []
beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterAll(() => fake.close())
beforeEach(() => {
  fake.reset()
  logged = []
})

const LOINC = 'http://loinc.org'
const upstreamTuning = {
  retryDelayMs: 0,
  sleep: async () => undefined,
  log: (line: string) => void logged.push(line),
}
const port = () => new URL(fake.base).port

describe('the operator keeps its secrets', () => {
  it('lists manifest URLs without credentials, query, local paths or internal hosts', async () => {
    const t = await startTestServer()
    try {
      const db = t.server.db
      addPublisher(db, {
        slug: 'remote',
        manifestUrl: 'http://user:pass@slots.example.org/x/$bulk-publish?access_token=T',
      })
      addPublisher(db, { slug: 'local', manifestUrl: join(SMART_EXAMPLES, '$bulk-publish') })
      addPublisher(db, { slug: 'lan', manifestUrl: 'http://10.0.0.5:8080/feed/$bulk-publish' })
      const response = await t.get('/v1/scheduling/publishers', bearer(t.key))
      const urls = Object.fromEntries(
        response.json.publishers.map((p: { slug: string; manifestUrl: string }) => [p.slug, p.manifestUrl]),
      )
      expect(urls).toEqual({
        remote: 'http://slots.example.org/x/$bulk-publish',
        local: 'file:$bulk-publish',
        lan: 'http://withheld.invalid/feed/$bulk-publish',
      })
      expect(response.text).not.toMatch(/user|pass|access_token|10\.0\.0\.5|\/data\//)
    } finally {
      await t.close()
    }
  })

  it('names a failing terminology source by what it serves; its address goes to the operator log only', async () => {
    const t = await startTestServer({
      plan: 'scale',
      env: { SVC_TERMINOLOGY_SOURCES: JSON.stringify({ [LOINC]: `http://u:p@127.0.0.1:${port()}/fhir` }) },
      upstream: upstreamTuning,
    })
    try {
      fake.script(json(200, { resourceType: 'Patient' }))
      const wrong = await t.get(`/v1/fhir/r4/CodeSystem/$lookup?system=${LOINC}&code=1`, bearer(t.key))
      expect(wrong.status).toBe(502)
      expect(wrong.json.issue[0].details.text).toBe(
        'The remote terminology source for http://loinc.org answered 200 without a Parameters.',
      )
      // Credentials in the source URL go as HTTP Basic, and are never shown.
      expect(fake.seen[0]?.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`)
      await fake.close()
      const refused = await t.get(`/v1/fhir/r4/CodeSystem/$lookup?system=${LOINC}&code=1`, bearer(t.key))
      expect(refused.status).toBe(502)
      expect(refused.json.issue[0].details.text).toBe(
        'The remote terminology source for http://loinc.org could not be reached.',
      )
      for (const text of [
        wrong.text,
        refused.text,
        JSON.stringify(wrong.headers),
        JSON.stringify(refused.headers),
      ])
        expect(text).not.toMatch(new RegExp(`127\\.0\\.0\\.1|${port()}|u:p|ECONNREFUSED`))
      expect(logged.join('\n')).toMatch(new RegExp(`127\\.0\\.0\\.1:${port()}.*ECONNREFUSED`))
      expect(logged.join('\n')).not.toContain('u:p')
    } finally {
      await t.close()
      fake = await startFakeUpstream()
    }
  })

  it('refuses to start when an upstream key would travel in clear, naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-keys-'))
    try {
      const env = { SVC_DB: join(dir, 'svc.db'), SVC_DIRECTORY_API_KEY: 'secret' }
      const clear = await runCli(['serve', '--port', '0'], {
        ...env,
        SVC_DIRECTORY_URL: 'http://directory.example.org/fhir',
      })
      expect(clear.code).toBe(2)
      expect(oneLine(clear.stderr)).toMatch(
        /Invalid setting SVC_DIRECTORY_URL: credentials for http:\/\/directory\.example\.org would travel in clear/,
      )
      expect(clear.stderr).not.toContain('secret')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a remote directory stays where it was configured', () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer({
      plan: 'scale',
      env: { SVC_DIRECTORY_URL: fake.base, SVC_DIRECTORY_API_KEY: 'dir-key' },
      upstream: upstreamTuning,
    })
  })
  afterAll(() => t.close())

  const bundle = (next?: string) => ({
    resourceType: 'Bundle',
    type: 'searchset',
    link: next ? [{ relation: 'next', url: next }] : [],
    entry: [{ resource: { resourceType: 'Practitioner', id: 'p1' }, search: { mode: 'match' } }],
  })
  const cursorOf = (response: { json: { link: { relation: string; url: string }[] } }) =>
    new URL(response.json.link.find((link) => link.relation === 'next')?.url as string).searchParams.get(
      'page',
    ) as string

  it('keeps no upstream address in its cursors, and follows only links under the configured base', async () => {
    fake.script(
      json(200, bundle(`${fake.base}/Practitioner?name=x&_page=2`)),
      json(200, bundle('/admin/secret?x=1')),
    )
    const first = await t.get('/v1/fhir/r4/Practitioner?name=x', bearer(t.key))
    expect(first.status, first.text).toBe(200)
    const cursor = cursorOf(first)
    const decoded = Buffer.from(cursor, 'base64url').toString('latin1')
    expect(decoded).not.toMatch(/127\.0\.0\.1|_page|fhir|Practitioner/)
    const second = await t.get(`/v1/fhir/r4/Practitioner?page=${cursor}`, bearer(t.key))
    expect(fake.seen.map((seen) => seen.url)).toEqual([
      '/fhir/Practitioner?name=x',
      '/fhir/Practitioner?name=x&_page=2',
    ])
    // The second page's next link leaves the base: the page is refused, and nothing there is ever requested.
    expect(second.status).toBe(502)
    expect(second.json.issue[0].details.text).toBe('The remote directory sent a link outside itself.')
    expect(fake.seen.some((seen) => seen.url.startsWith('/admin'))).toBe(false)
  })

  it.each(['..', '.', '%2e%2e', '%2E'])('refuses the id %s before sending anything', async (id) => {
    const response = await rawRequest(t.url, 'GET', `/v1/fhir/r4/Location/${id}`, bearer(t.key))
    expect(response.status).toBe(400)
    expect(response.json.issue[0].expression).toEqual(['id'])
    expect(fake.seen).toEqual([])
  })

  it('refuses a cursor of another source kind, and any cursor spelled otherwise than it was written', async () => {
    const local = new CursorCodec(t.server.db, t.now, 'local').seal('Practitioner', { p: {}, a: 0, r: 0 })
    const response = await t.get(`/v1/fhir/r4/Practitioner?page=${local}`, bearer(t.key))
    expect(response.status).toBe(400)
    expect(response.json.issue[0].details.text).toMatch(/another source/)
    fake.script(json(200, bundle(`${fake.base}/Practitioner?_page=2`)))
    const cursor = cursorOf(await t.get('/v1/fhir/r4/Practitioner?name=y', bearer(t.key)))
    const last = cursor.at(-1) as string
    // The last character carries spare bits: its neighbours decode to the same bytes leniently.
    const sibling = String.fromCharCode(last.charCodeAt(0) ^ 1)
    for (const respelled of [
      `${cursor}=`,
      `${cursor.slice(0, -1)}${sibling}`,
      `${cursor.slice(0, 8)}!${cursor.slice(8)}`,
      `${cursor.slice(0, 8)} ${cursor.slice(8)}`,
    ]) {
      const answer = await t.get(
        `/v1/fhir/r4/Practitioner?page=${encodeURIComponent(respelled)}`,
        bearer(t.key),
      )
      expect(answer.status, respelled).toBe(400)
    }
    expect(fake.seen.length).toBe(1)
  })
})

describe('bounded effort per call', () => {
  it('refuses more than 20 codings in a codeableConcept with too-long', async () => {
    const t = await startTestServer({ plan: 'scale' })
    try {
      const concept = (count: number) => ({
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'codeableConcept',
            valueCodeableConcept: {
              coding: Array.from({ length: count }, (_, i) => ({ system: LOINC, code: `${i}` })),
            },
          },
        ],
      })
      const response = await t.send('POST', '/v1/fhir/r4/CodeSystem/$validate-code', {
        headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
        body: JSON.stringify(concept(2000)),
      })
      expect(response.status).toBe(400)
      expect(response.json.issue[0]).toMatchObject({ code: 'too-long', expression: ['codeableConcept'] })
    } finally {
      await t.close()
    }
  })

  it('stops the upstream work when the caller hangs up, and answers 504 past the call deadline', async () => {
    const t = await startTestServer({
      plan: 'scale',
      env: { SVC_TERMINOLOGY_SOURCES: JSON.stringify({ [LOINC]: fake.base }), SVC_UPSTREAM_DEADLINE_S: '1' },
      upstream: { ...upstreamTuning, timeoutMs: 10_000 },
    })
    try {
      fake.script(hang, hang, hang, hang)
      const controller = new AbortController()
      const gone = request(`${t.url}/v1/fhir/r4/CodeSystem/$lookup?system=${LOINC}&code=1`, {
        headers: bearer(t.key),
        signal: controller.signal,
      }).catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 200))
      controller.abort()
      await gone
      await new Promise((resolve) => setTimeout(resolve, 300))
      // One attempt, cut off with its caller: no retry goes out after the caller left.
      expect(fake.seen.length).toBe(1)
      fake.reset()
      fake.script(hang, hang)
      const started = performance.now()
      const late = await t.get(`/v1/fhir/r4/CodeSystem/$lookup?system=${LOINC}&code=1`, bearer(t.key))
      expect(late.status).toBe(504)
      expect(performance.now() - started).toBeLessThan(3_000)
    } finally {
      await t.close()
    }
  })
})

describe('traffic from anyone who can reach the port', () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer({ plan: 'developer', bodyTimeoutMs: 300 })
  })
  afterAll(() => t.close())

  it('is counted, not stored: 20,000 keyless requests with 2 KB paths grow the live file by under 1 MB', async () => {
    const liveFile = t.dbPath.replace(/\.db$/, '.live.db')
    const size = () => {
      t.server.live.pragma('wal_checkpoint(TRUNCATE)')
      return statSync(liveFile).size
    }
    await t.server.flush()
    const before = size()
    const client = new Client(t.url, { pipelining: 10 })
    const path = `/v1/${'x'.repeat(2048)}`
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 1000; i++) {
          const response = await client.request({ method: 'GET', path })
          await response.body.dump()
        }
      }),
    )
    await client.close()
    await t.server.flush()
    expect(size() - before).toBeLessThan(1024 * 1024)
    const counted = t.server.live
      .prepare('SELECT sum(count) FROM request_tallies WHERE status = 401')
      .pluck()
      .get()
    expect(counted).toBe(20_000)
  })

  it.each([
    'Practitioner?name=a%00b',
    'Practitioner?family=smith%00',
    'Practitioner?given=a%01',
    'Organization?name=a%01',
    'ValueSet/$expand?url=http://nucc.org/provider-taxonomy?fhir_vs=isa/%ZZ',
    'ValueSet/$expand?url=a%ZZ',
  ])('answers 400 naming the parameter, never 500: %s', async (query) => {
    const response = await t.get(`/v1/fhir/r4/${query}`, bearer(t.key))
    expect(response.status).toBe(400)
    expect(response.json.issue[0].expression[0]).toMatch(/name|family|given|url/)
  })

  it('refuses a control character outside the FHIR base too, and counts such answers against the plan', async () => {
    const response = await t.get('/v1/scheduling/slots?city=Bos%00ton', bearer(t.key))
    expect(response.status).toBe(400)
    expect(response.json.issues[0].path).toEqual(['city'])
    // Developer: 60 a minute. 400s count, so the plan's limit still holds against a flood of them.
    t.setNow(t.now() + 60_000)
    const statuses: number[] = []
    for (let i = 0; i < 62; i++)
      statuses.push((await t.get('/v1/fhir/r4/Practitioner?name=a%00b', bearer(t.key))).status)
    expect(statuses.filter((status) => status === 429).length).toBe(2)
  })

  it('cuts a body that trickles in with 408', async () => {
    t.setNow(t.now() + 60_000)
    const socket = connect(Number(new URL(t.url).port), '127.0.0.1')
    socket.write(
      `POST /v1/fhir/r4 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/fhir+json\r\nContent-Length: 100\r\n\r\n{`,
    )
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (chunk) => (text += chunk))
      socket.on('close', () => resolve(text))
    })
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    expect(answer).toMatch(/"code":"timeout"/)
  })
})

describe('the connection cap', () => {
  it('refuses connections past SVC_MAX_CONNECTIONS', async () => {
    const t = await startTestServer({ env: { SVC_MAX_CONNECTIONS: '2' } })
    try {
      const port = Number(new URL(t.url).port)
      const open = () =>
        new Promise<'open' | 'refused'>((resolve) => {
          const socket = connect(port, '127.0.0.1')
          socket.on('close', () => resolve('refused'))
          socket.on('connect', () => setTimeout(() => resolve(socket.destroyed ? 'refused' : 'open'), 200))
        })
      expect(await open()).toBe('open')
      expect(await open()).toBe('open')
      expect(await open()).toBe('refused')
    } finally {
      t.server.server.closeAllConnections()
      await t.close()
    }
  })
})

describe('the operator log of internal faults', () => {
  it('logs one kind with its stack once a minute, then says how many more came', () => {
    let now = 0
    const lines: string[] = []
    const log = throttledErrorLog(
      (line) => void lines.push(line),
      () => now,
    )
    const fault = () => new Error('same fault')
    for (let i = 0; i < 100; i++) log(fault())
    now = 61_000
    log(fault())
    expect(lines).toEqual(['internal error:', 'internal error (also 99 more times in the minute before):'])
  })
})
