import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { gunzipSync } from 'node:zlib'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import { addPublisher, removePublisher, setPublisherEnabled } from '../src/scheduling/publishers.js'
import { SlotIndex } from '../src/scheduling/search/slotIndex.js'
import { syncPublisher, syncPublishers } from '../src/scheduling/sync/syncPublisher.js'
import { type FeedServer, startFeedServer } from './support/feedServer.js'
import { bearer, DEFAULT_NOW, startTestServer, type TestServer } from './support/harness.js'
import { SMART_EXAMPLES } from './support/fixtures.js'
import { STU1_DEFAULT_MATCHES, writeStu1Feed } from './support/stu1Feed.js'

let server: TestServer
let feeds: FeedServer
let feedDir: string

const sync = (slug: string) => syncPublisher(server.server.db, slug, { clock: server.now })
/** Moves the injected clock past the once-a-minute guard. */
const nextMinute = () => server.setNow(server.now() + 61_000)
const api = async (path: string) => {
  const response = await server.get(path, bearer(server.key))
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.text}`)
  return response.json
}
const ids = (body: { slots: { source: { resourceId: string } }[] }) =>
  body.slots.map((slot) => slot.source.resourceId)

beforeAll(async () => {
  // Scale: this suite sends far more than Developer's 60 requests a minute.
  server = await startTestServer({ plan: 'scale' })
  feedDir = mkdtempSync(join(tmpdir(), 'svc-feeds-'))
  cpSync(SMART_EXAMPLES, join(feedDir, 'smart'), { recursive: true })
  writeStu1Feed(join(feedDir, 'stu1'))
  feeds = await startFeedServer(feedDir)
  addPublisher(server.server.db, {
    slug: 'smart',
    manifestUrl: `${feeds.url}/smart/$bulk-publish`,
    displayName: 'SMART examples',
  })
  addPublisher(server.server.db, { slug: 'stu1', manifestUrl: join(feedDir, 'stu1', '$bulk-publish') })
})
afterAll(async () => {
  await feeds.close()
  await server.close()
  rmSync(feedDir, { recursive: true, force: true })
})

/** The fixture's slots read straight from its files: the oracle for what the API must return. */
function fixtureSlots(): { id: string; status: string; start: string }[] {
  return readdirSync(join(feedDir, 'smart'))
    .filter((name) => name.startsWith('slots-'))
    .flatMap((name) =>
      readFileSync(join(feedDir, 'smart', name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    )
}

describe('sync', () => {
  it('imports the original-form fixture over HTTP with relative output URLs', async () => {
    const report = await sync('smart')
    const expected = fixtureSlots()
    expect(report).toMatchObject({ outcome: 'synced', written: expected.length, skipped: 0 })
    const body = await api('/v1/scheduling/slots?includePast=true&limit=100')
    expect(body.total).toBe(expected.filter((slot) => slot.status === 'free').length)
    const first = body.slots[0]
    expect(first).toMatchObject({
      publisher: 'smart',
      status: 'free',
      isVirtual: false,
      serviceTypeCode: '57',
      serviceTypeText: 'Immunization',
      bookingPhone: '000-000-0000',
      capacity: 100,
      location: { city: 'Boston', state: 'MA', postalCode: '02114', phone: ['000-000-0000'] },
      source: { publisher: 'smart', transactionTime: '2021-04-22T14:28:21.582Z' },
    })
    expect(first.bookingDeepLink).toMatch(/^https:\/\/ehr-portal\.example\.org\/bookings\?slot=/)
    expect(first.serviceTypes).toHaveLength(2)
  })

  it('asks with If-None-Match next time and does no work for an unchanged manifest', async () => {
    nextMinute()
    const before = feeds.requests.length
    const report = await sync('smart')
    expect(report.outcome).toBe('unchanged')
    expect(feeds.requests.slice(before)).toEqual([
      { path: '/smart/$bulk-publish', ifNoneMatch: expect.stringMatching(/^"/) },
    ])
  })

  it('fetches a publisher at most once a minute', async () => {
    const before = feeds.requests.length
    expect((await sync('smart')).outcome).toBe('skipped')
    expect(feeds.requests.length).toBe(before)
  })

  it('reads absolute output URLs', async () => {
    const manifest = JSON.parse(readFileSync(join(feedDir, 'smart', '$bulk-publish'), 'utf8'))
    for (const output of manifest.output) output.url = `${feeds.url}/smart/${output.url}`
    writeFileSync(join(feedDir, 'smart', 'absolute.json'), JSON.stringify(manifest))
    addPublisher(server.server.db, { slug: 'absolute', manifestUrl: `${feeds.url}/smart/absolute.json` })
    expect(await sync('absolute')).toMatchObject({ outcome: 'synced', written: fixtureSlots().length })
    const body = await api('/v1/scheduling/slots?includePast=true&publisher=absolute&limit=1')
    expect(body.total).toBe(fixtureSlots().filter((slot) => slot.status === 'free').length)
    removePublisher(server.server.db, 'absolute')
    expect((await api('/v1/scheduling/slots?includePast=true&publisher=absolute')).total).toBe(0)
  })

  it('imports the HL7 STU 1 form from disk and reports each bad record with file and line', async () => {
    const report = await sync('stu1')
    expect(report.outcome).toBe('synced')
    expect(report.written).toBe(11)
    expect(report.problems.map((problem) => `${problem.file.split('/').pop()}:${problem.line}`)).toEqual([
      'slots.ndjson:7',
      'slots.ndjson:13',
    ])
    expect(report.problems[1]?.message).toContain('unknown Schedule/sch-missing')
  })

  it('keeps the previous data when an output fails, breaks off, or the manifest is not JSON', async () => {
    const baseline = await api('/v1/scheduling/slots?includePast=true&publisher=smart&limit=100')
    const manifestPath = join(feedDir, 'smart', '$bulk-publish')
    const original = readFileSync(manifestPath, 'utf8')
    // A changed manifest forces a full fetch of the outputs.
    writeFileSync(manifestPath, original.replace('2021-04-22T14:28:21.582Z', '2021-04-23T00:00:00.000Z'))
    for (const failure of [503, 'truncate'] as const) {
      nextMinute()
      feeds.failures.set('/smart/slots-2021-W11.ndjson', failure)
      const report = await sync('smart')
      expect(report.outcome).toBe('failed')
      expect(report.message).toMatch(failure === 503 ? /answered 503/ : /broke off|closed/)
      expect(await api('/v1/scheduling/slots?includePast=true&publisher=smart&limit=100')).toEqual(baseline)
    }
    feeds.failures.clear()
    nextMinute()
    writeFileSync(manifestPath, '{"output": [')
    expect((await sync('smart')).message).toMatch(/manifest is not valid JSON/)
    expect(await api('/v1/scheduling/slots?includePast=true&publisher=smart&limit=100')).toEqual(baseline)
    writeFileSync(manifestPath, original)
  })

  it('a re-sync of unchanged data changes nothing: same slots, same keys', async () => {
    const before = await api('/v1/scheduling/provider-locations?includePast=true&limit=100')
    const manifestPath = join(feedDir, 'stu1', '$bulk-publish')
    const manifest = readFileSync(manifestPath, 'utf8')
    writeFileSync(manifestPath, manifest.replace('"request"', '"note":"re-published","request"'))
    nextMinute()
    expect((await sync('stu1')).outcome).toBe('synced')
    const after = await api('/v1/scheduling/provider-locations?includePast=true&limit=100')
    expect(after).toEqual(before)
  })
})

describe('slot search', () => {
  it('serves the default search: free slots from now on, never nopt, by start then id', async () => {
    const body = await api('/v1/scheduling/slots?publisher=stu1')
    expect(ids(body)).toEqual(['j1', 'f1', 'w1', 'f2', 's1', 's2', 's3', 'j2'])
    expect(body.total).toBe(STU1_DEFAULT_MATCHES.length)
    const s1 = body.slots.find((slot: { id: string }) => slot.id === 'stu1:s1')
    expect(s1).toMatchObject({
      start: '2026-11-23T14:00:00.000Z',
      end: '2026-11-23T14:30:00.000Z',
      acceptingPatients: 'newpt',
      bookingPhone: '413-555-0123',
      bookingDeepLink: 'https://book.example.org/s1',
      provider: {
        id: 'role-smith',
        type: 'practitioner-role',
        name: 'Dr. John Smith',
        npi: '1234567893',
        specialty: 'General medicine',
      },
      location: { id: 'loc-pittsfield', city: 'Pittsfield' },
    })
  })

  it('filters by every parameter', async () => {
    const q = async (query: string) => ids(await api(`/v1/scheduling/slots?publisher=stu1&${query}`)).sort()
    expect(await q('npi=1987654321')).toEqual(['j1', 'j2'])
    expect(await q('npi=1234567893,1112223334')).toEqual(['f1', 'f2', 's1', 's2', 's3'])
    expect(await q('specialty=207Q00000X')).toEqual(['j1', 'j2'])
    expect(await q('specialty=http://snomed.info/sct|419772000')).toEqual(['s1', 's2', 's3'])
    expect(await q('specialty=http://nucc.org/provider-taxonomy|419772000')).toEqual([])
    expect(await q('serviceTypeCode=flu,124')).toEqual(['f1', 'f2', 'j1', 'j2', 's1', 's2', 's3'])
    expect(await q('appointmentType=WALKIN')).toEqual(['f1', 'f2'])
    // A slot that declares no patient type matches any requested value.
    expect(await q('acceptingPatients=newpt')).toEqual(['f1', 'f2', 's1', 's3', 'w1'])
    expect(await q('acceptingPatients=existptfam')).toEqual(['f1', 'f2', 'j1', 'j2', 's3', 'w1'])
    expect(await q('isVirtual=true')).toEqual(['j1', 'j2'])
    expect(await q('city=pittsfield&state=ma')).toEqual(['f1', 'f2', 's1', 's2', 's3', 'w1'])
    expect(await q('status=busy')).toEqual(['s4'])
    expect(await q('includePast=true&npi=1234567893')).toEqual(['s1', 's2', 's3', 's5'])
    expect(await q('startAfter=2026-11-23T00:00:00Z&startBefore=2026-11-24T14:00:00%2B00:00')).toEqual([
      's1',
      's2',
      's3',
    ])
  })

  it('does not serve a disabled publisher, filtered by it or not', async () => {
    // Unfiltered, every served series matches: the page is checked against series rows, not an id list.
    const unfiltered = () => api('/v1/scheduling/slots?startAfter=2026-11-21T00:00:00Z')
    const before = await unfiltered()
    expect(ids(before).sort()).toEqual([...STU1_DEFAULT_MATCHES].sort())
    expect(before.total).toBe(STU1_DEFAULT_MATCHES.length)
    setPublisherEnabled(server.server.db, 'stu1', false)
    expect((await api('/v1/scheduling/slots?publisher=stu1')).total).toBe(0)
    expect(await unfiltered()).toEqual({ slots: [], total: 0 })
    const { publishers } = await api('/v1/scheduling/publishers')
    expect(publishers.find((publisher: { slug: string }) => publisher.slug === 'stu1').enabled).toBe(false)
    setPublisherEnabled(server.server.db, 'stu1', true)
    expect((await api('/v1/scheduling/slots?publisher=stu1')).total).toBe(8)
  })

  it('pages without overlap or gap: the union of pages is the match set, in order', async () => {
    const walk = async (path: string, limit: number) => {
      const seen: string[] = []
      let total = Number.POSITIVE_INFINITY
      for (let offset = 0; offset < total; offset += limit) {
        const page = await api(`${path}&limit=${limit}&offset=${offset}`)
        total = page.total
        seen.push(
          ...(page.slots ?? page.providerLocations).map(
            (item: { id?: string; key: string }) => item.id ?? item.key,
          ),
        )
      }
      expect(seen).toHaveLength(total)
      expect(new Set(seen).size).toBe(total)
      return seen
    }
    const path = '/v1/scheduling/slots?includePast=true'
    const whole = await walk(path, 100)
    expect(whole).toHaveLength(fixtureSlots().filter((slot) => slot.status === 'free').length + 9)
    expect(await walk(path, 7)).toEqual(whole)
    const groups = '/v1/scheduling/provider-locations?includePast=true'
    expect(await walk(groups, 3)).toEqual(await walk(groups, 100))
    const beyond = await api(`${path}&offset=${whole.length}`)
    expect(beyond).toEqual({ slots: [], total: whole.length })
  })
})

describe('grouped search', () => {
  it('groups matches by provider at a location; counts equal the slots behind each key', async () => {
    const { providerLocations, total } = await api('/v1/scheduling/provider-locations?publisher=stu1')
    expect(total).toBe(4)
    expect(providerLocations.map((group: { totalSlots: number }) => group.totalSlots)).toEqual([2, 2, 1, 3])
    for (const group of providerLocations) {
      const slots = await api(`/v1/scheduling/slots?providerLocationKey=${group.key}&limit=100`)
      expect(slots.total).toBe(group.totalSlots)
      expect(slots.slots[0].start).toBe(group.nextAvailableStart)
      const cards = await api(`/v1/scheduling/slots?actorKey=${group.key}&limit=100`)
      expect(cards.total).toBe(group.totalSlots)
    }
    const [jones, flu, walkin, smith] = providerLocations
    expect(jones).toMatchObject({
      isVirtual: true,
      acceptingPatients: 'existptfam',
      bookingMethod: 'online',
      provider: { name: 'Dr. Ann Jones', npi: '1987654321' },
      location: { physicalType: { code: 'vi' } },
    })
    expect(flu.provider).toMatchObject({ type: 'healthcare-service', npi: '1112223334' })
    expect(walkin.provider).toBeUndefined()
    expect(smith.specialties.map((coding: { code: string }) => coding.code).sort()).toEqual([
      '394802001',
      '419772000',
    ])
    expect(smith.acceptingPatients).toBeUndefined() // its slots declare different codes
  })

  it('counts the same whether from now (by subtraction) or from an explicit moment (by index range)', async () => {
    const now = new Date(server.now()).toISOString()
    for (const filter of ['', 'state=MA', 'npi=1234567893', 'status=busy', 'serviceTypeCode=57,124']) {
      for (const listing of ['slots', 'provider-locations']) {
        const fromNow = await api(`/v1/scheduling/${listing}?${filter}&limit=100`)
        const explicit = await api(`/v1/scheduling/${listing}?${filter}&limit=100&startAfter=${now}`)
        expect(explicit).toEqual(fromNow)
      }
    }
  })

  it('serves the older actor cards with the same groups and keys', async () => {
    const groups = await api('/v1/scheduling/provider-locations?publisher=stu1&limit=2&offset=1')
    const cards = await api('/v1/scheduling/actors?publisher=stu1&limit=2&offset=1')
    expect(cards.total).toBe(groups.total)
    expect(cards.actors.map((card: { key: string }) => card.key)).toEqual(
      groups.providerLocations.map((group: { key: string }) => group.key),
    )
    expect(cards.actors[0].serviceTypes).toEqual([{ code: 'flu', display: 'Flu shot' }])
  })

  it('lists the specialties and service types of served slots', async () => {
    const { specialties } = await api('/v1/scheduling/specialties')
    expect(specialties.map((coding: { code: string }) => coding.code)).toEqual([
      '207Q00000X',
      '394802001',
      '419772000',
    ])
    const { serviceTypes } = await api('/v1/scheduling/service-types')
    expect(serviceTypes).toContainEqual({
      system: 'https://example.org/services',
      code: 'flu',
      display: 'Flu shot',
    })
  })
})

describe('answers kept for the next identical search', () => {
  it('answers a search from now the same until its first match starts, then without it', async () => {
    const paths = [
      '/v1/scheduling/slots?publisher=stu1&limit=2',
      '/v1/scheduling/provider-locations?publisher=stu1&limit=2',
    ]
    try {
      const before = await Promise.all(paths.map(api))
      expect(ids(before[0])).toEqual(['j1', 'f1'])
      // j1 starts at 13:00:00Z: up to that very moment it is still a match.
      server.setNow('2026-11-22T13:00:00.000Z')
      expect(await Promise.all(paths.map(api))).toEqual(before)
      server.setNow('2026-11-22T13:00:00.001Z')
      const [slots, groups] = await Promise.all(paths.map(api))
      expect(ids(slots)).toEqual(['f1', 'w1'])
      expect(slots.total).toBe(before[0].total - 1)
      expect(groups.total).toBe(before[1].total)
      expect(groups.providerLocations[0].nextAvailableStart).not.toBe(
        before[1].providerLocations[0].nextAvailableStart,
      )
    } finally {
      server.setNow(DEFAULT_NOW)
    }
  })

  it('gzips a kept answer once for every caller that accepts gzip, the same JSON as uncompressed', async () => {
    const path = '/v1/scheduling/slots?includePast=true&limit=100'
    const plain = await api(path)
    const headers = { ...bearer(server.key), 'accept-encoding': 'gzip, deflate' }
    for (let ask = 0; ask < 2; ask++) {
      const response = await request(`${server.url}${path}`, { headers })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-encoding']).toBe('gzip')
      expect(response.headers.vary).toBe('Accept-Encoding')
      // Sent whole from memory, so with its length: the compression middleware would stream it chunked.
      expect(Number(response.headers['content-length'])).toBeGreaterThan(0)
      const body = gunzipSync(Buffer.from(await response.body.arrayBuffer()))
      expect(JSON.parse(body.toString())).toEqual(plain)
    }
  })

  it('forgets kept answers as soon as another process changes the database', async () => {
    const path = '/v1/scheduling/slots?publisher=stu1&limit=1'
    const other = openDatabase(server.dbPath)
    try {
      expect((await api(path)).total).toBe(8)
      expect((await api('/v1/scheduling/publishers')).publishers).toHaveLength(2)
      setPublisherEnabled(other, 'stu1', false)
      expect((await api(path)).total).toBe(0)
      addPublisher(other, { slug: 'later', manifestUrl: join(feedDir, 'none') })
      expect((await api('/v1/scheduling/publishers')).publishers).toHaveLength(3)
    } finally {
      setPublisherEnabled(other, 'stu1', true)
      removePublisher(other, 'later')
      other.close()
    }
    expect((await api(path)).total).toBe(8)
  })
})

describe('kept answers through changes to other publishers', () => {
  it('holds an answer through a change to publishers none of whose series match it, and only then', async () => {
    const index = new SlotIndex(server.server.db)
    const other = openDatabase(server.dbPath)
    // A change by another connection is seen from the next event-loop turn (Db.changeGeneration).
    const change = async (slug: string, enabled: boolean) => {
      setPublisherEnabled(other, slug, enabled)
      await new Promise(setImmediate)
    }
    try {
      const onSmart = index.answerHolds({ publisher: 'smart', groupKeys: [] })
      const onStu1 = index.answerHolds({ publisher: 'stu1', groupKeys: [] })
      const overAll = index.answerHolds({ groupKeys: [] })
      await change('stu1', false)
      expect(onSmart()).toBe(true)
      expect(onStu1()).toBe(false)
      expect(overAll()).toBe(false)
      // Served again as it was: what the answers were made from is back.
      await change('stu1', true)
      expect(onStu1()).toBe(true)
      // A publisher that comes to match: made while no served series was in Worcester, where smart has one.
      await change('smart', false)
      const inWorcester = index.answerHolds({ city: 'Worcester', groupKeys: [] })
      const onStu1Again = index.answerHolds({ publisher: 'stu1', groupKeys: [] })
      await change('smart', true)
      expect(inWorcester()).toBe(false)
      expect(onStu1Again()).toBe(true)
    } finally {
      setPublisherEnabled(other, 'stu1', true)
      setPublisherEnabled(other, 'smart', true)
      other.close()
    }
  })
})

describe('values no served publisher lists', () => {
  it('name nothing while none does, and are found again once a publisher listing them is served again', async () => {
    const other = openDatabase(server.dbPath)
    const change = async (enabled: boolean) => {
      setPublisherEnabled(other, 'stu1', enabled)
      await new Promise(setImmediate)
    }
    // stu1 alone lists flu; no publisher lists the other value.
    const paths = ['slots', 'provider-locations'].map(
      (listing) => `/v1/scheduling/${listing}?serviceTypeCode=no-such-code,flu`,
    )
    try {
      const totals = await Promise.all(paths.map(async (path) => (await api(path)).total))
      expect(totals.every((total) => total > 0)).toBe(true)
      await change(false)
      for (const path of paths) expect((await api(path)).total).toBe(0)
      // The answers kept while stu1 was not served do not hold once it is again.
      await change(true)
      for (const [nth, path] of paths.entries()) expect((await api(path)).total).toBe(totals[nth])
    } finally {
      setPublisherEnabled(other, 'stu1', true)
      other.close()
    }
  })
})

describe('parameter rules', () => {
  const problem = async (path: string) => {
    const response = await server.get(path, bearer(server.key))
    expect(response.status).toBe(400)
    expect(response.headers['content-type']).toContain('application/problem+json')
    return response.json.issues.map((issue: { path: string[] }) => issue.path.join('.')).sort()
  }

  it('refuses every bad value at once, naming each parameter', async () => {
    const query = [
      'status=booked',
      'acceptingPatients=nopt',
      'limit=101',
      'offset=-1',
      'isVirtual=yes',
      'startAfter=2026-11-21T10:00Z',
      'startBefore=2026-11-21',
      'npi=123',
      `serviceTypeCode=${Array.from({ length: 101 }, (_, index) => index).join(',')}`,
      'specialty=a|b|c',
      'includePast=1',
      'publisher=',
    ].join('&')
    expect(await problem(`/v1/scheduling/slots?${query}`)).toEqual(
      [
        'status',
        'acceptingPatients',
        'limit',
        'offset',
        'isVirtual',
        'startAfter',
        'startBefore',
        'npi',
        'serviceTypeCode',
        'specialty',
        'includePast',
        'publisher',
      ].sort(),
    )
  })

  it('refuses unknown and repeated names before values', async () => {
    expect(await problem('/v1/scheduling/slots?limit=0&color=red&state=MA&state=NY')).toEqual([
      'color',
      'state',
    ])
    expect(await problem('/v1/scheduling/provider-locations?providerLocationKey=x')).toEqual([
      'providerLocationKey',
    ])
    expect(await problem('/v1/scheduling/actors?actorKey=x')).toEqual(['actorKey'])
    expect(await problem('/v1/scheduling/publishers?limit=1')).toEqual(['limit'])
  })

  it('accepts the bounds themselves', async () => {
    await api('/v1/scheduling/slots?limit=1&offset=9007199254740991')
    await api('/v1/scheduling/provider-locations?limit=100&offset=0')
    await api(`/v1/scheduling/slots?npi=${Array.from({ length: 100 }, () => '1234567893').join(',')}`)
  })
})

describe('a store without room', () => {
  it('fails the publisher whose slots do not fit, keeping what was there, and goes on to the next', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-full-'))
    writeStu1Feed(join(dir, 'stu1'))
    const db = openDatabase(join(dir, 'svc.db'))
    try {
      addPublisher(db, { slug: 'stu1', manifestUrl: join(dir, 'stu1', '$bulk-publish') })
      addPublisher(db, { slug: 'smart', manifestUrl: join(SMART_EXAMPLES, '$bulk-publish') })
      const at = Date.parse(DEFAULT_NOW)
      expect((await syncPublisher(db, 'stu1', { clock: () => at })).outcome).toBe('synced')
      const slots = () => db.prepare('SELECT count(*) FROM sched_slots').pluck().get()
      const held = slots()
      // The file may not grow: what a full disk does to a sync, on any machine.
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`)
      const reports = await syncPublishers(db, { clock: () => at + 1_000 })
      expect(reports.map((report) => [report.publisher, report.outcome, report.message])).toEqual([
        ['smart', 'failed', 'the store: database or disk is full'],
        ['stu1', 'skipped', expect.stringMatching(/fetched less than a minute ago/)],
      ])
      expect(db.inTransaction).toBe(false)
      expect(slots()).toBe(held)
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      db.pragma('max_page_count = 1073741823')
      expect((await syncPublisher(db, 'smart', { clock: () => at + 61_000 })).outcome).toBe('synced')
      expect(slots()).toBeGreaterThan(held as number)
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
