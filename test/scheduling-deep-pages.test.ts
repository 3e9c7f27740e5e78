import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db/open.js'
import { addPublisher, setPublisherEnabled } from '../src/scheduling/publishers.js'
import { SERVED_SERIES, type SeriesFilters } from '../src/scheduling/search/series.js'
import { SlotIndex } from '../src/scheduling/search/slotIndex.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'
import { bearer, DEFAULT_NOW, startTestServer, type TestServer } from './support/harness.js'
import { writeStu1Feed } from './support/stu1Feed.js'

/**
 * A deep page starts its walk at the last whole hour before it, and a page of the first few matches of many
 * series reads only the series that can hold it, both found from each series' slot starts
 * (src/scheduling/search/startTimes.ts). Each must list exactly the slots the plain ordered query lists at that offset:
 * hour boundaries, many slots on one start, past, nopt and busy slots, and slots of a disabled publisher all
 * sit among them.
 */

const EXT = 'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/'
const SCHEDULES = ['sch-smith', 'sch-jones', 'sch-flu', 'sch-walkin', 'sch-smith-role-only']
const STATUSES = ['free', 'free', 'free', 'busy']
const PATIENT_TYPES = [undefined, 'newpt', 'existptonly', 'nopt']

let server: TestServer
let feedDir: string
let db: Db
let syncedAt = Date.parse(DEFAULT_NOW)

/**
 * About 10,000 slots over four days around DEFAULT_NOW, on whole hours and between them, many sharing a
 * start; `shift` ms after them all.
 */
function writeSlots(dir: string, seed: number, shift = 0) {
  let state = seed
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
  const base = Date.parse('2026-11-20T00:00:00Z')
  const lines: string[] = []
  for (let n = 0; n < 10_000; n++) {
    // Quarter hours: every fourth start is on the hour, and each start is shared by several slots.
    const start = base + Math.floor(next() * 4 * 24 * 4) * 900_000 + shift
    const patientType = PATIENT_TYPES[Math.floor(next() * PATIENT_TYPES.length)]
    lines.push(
      JSON.stringify({
        resourceType: 'Slot',
        id: `g${n}`,
        schedule: { reference: `Schedule/${SCHEDULES[Math.floor(next() * SCHEDULES.length)]}` },
        status: STATUSES[Math.floor(next() * STATUSES.length)],
        start: new Date(start).toISOString(),
        end: new Date(start + 900_000).toISOString(),
        ...(patientType
          ? { extension: [{ url: `${EXT}patient-type`, valueCoding: { code: patientType } }] }
          : {}),
        // Some slots name service types of their own, three at once: their series are listed under each.
        ...(n % 5 === 0 ? { serviceType: ['124', 'x1', 'flu'].map((code) => ({ coding: [{ code }] })) } : {}),
      }),
    )
  }
  writeFileSync(join(dir, 'slots.ndjson'), `${lines.join('\n')}\n`)
  const manifest = join(dir, '$bulk-publish')
  writeFileSync(
    manifest,
    readFileSync(manifest, 'utf8').replace(/("note":"[^"]*",)?"request"/, `"note":"${seed}","request"`),
  )
}

async function sync(slug: string) {
  syncedAt += 61_000 // past the once-a-minute guard
  expect((await syncPublisher(db, slug, { clock: () => syncedAt })).outcome).toBe('synced')
}

/** The oracle: the page straight from SQL, every served match in start then id order. */
function plainPage(where: string, params: unknown[], limit: number, offset: number): string[] {
  return db
    .prepare(
      `SELECT t.id FROM sched_slots t JOIN sched_series r ON r.id = t.series_id
       WHERE ${SERVED_SERIES} AND ${where} ORDER BY t.start_ms, t.id LIMIT ? OFFSET ?`,
    )
    .pluck()
    .all(...params, limit, offset) as string[]
}

const CASES: [query: string, where: string, params: unknown[]][] = [
  ['', 't.status = 0 AND t.start_ms >= ?', [Date.parse(DEFAULT_NOW)]],
  ['includePast=true', 't.status = 0', []],
  ['status=busy&includePast=true', 't.status = 1', []],
  // Not on an hour: the matches before the first whole hour are counted by subtraction.
  [
    'startAfter=2026-11-21T13:17:00Z',
    't.status = 0 AND t.start_ms >= ?',
    [Date.parse('2026-11-21T13:17:00Z')],
  ],
  // One listed value alone: the page's beginning is found in the value's starts kept together.
  ['serviceTypeCode=57&includePast=true', `t.status = 0 AND r.service_types LIKE '%"code":"57"%'`, []],
  ['state=ma', "t.status = 0 AND lower(r.state) = 'ma' AND t.start_ms >= ?", [Date.parse(DEFAULT_NOW)]],
  ['isVirtual=true&includePast=true', 't.status = 0 AND r.is_virtual = 1', []],
  [
    'acceptingPatients=newpt',
    `t.status = 0 AND (r.accepting IS NULL OR r.accepting = 'newpt') AND t.start_ms >= ?`,
    [Date.parse(DEFAULT_NOW)],
  ],
  // Traits alone are read from their series' starts kept together (SlotIndex.traitSources): in a window too.
  [
    'acceptingPatients=existptonly&isVirtual=false&startAfter=2026-11-20T13:17:00Z&startBefore=2026-11-23T05:00:00Z',
    `t.status = 0 AND (r.accepting IS NULL OR r.accepting = 'existptonly') AND r.is_virtual = 0
     AND t.start_ms >= ? AND t.start_ms <= ?`,
    [Date.parse('2026-11-20T13:17:00Z'), Date.parse('2026-11-23T05:00:00Z')],
  ],
  [
    'isVirtual=false&status=busy&startAfter=2026-11-20T06:00:00Z',
    't.status = 1 AND r.is_virtual = 0 AND t.start_ms >= ?',
    [Date.parse('2026-11-20T06:00:00Z')],
  ],
  // Service types naming every series (and one naming none): answered as no filter is, in a window too.
  ['serviceTypeCode=124,57,404,57&includePast=true', 't.status = 0', []],
  [
    'serviceTypeCode=57,124&startAfter=2026-11-20T13:17:00Z&startBefore=2026-11-22T05:00:00Z',
    't.status = 0 AND t.start_ms >= ? AND t.start_ms <= ?',
    [Date.parse('2026-11-20T13:17:00Z'), Date.parse('2026-11-22T05:00:00Z')],
  ],
  // Values that each list the same series: it is counted and paged once, not three times.
  [
    'serviceTypeCode=124,x1,flu,404&includePast=true',
    `t.status = 0 AND (r.service_types LIKE '%"code":"124"%' OR r.service_types LIKE '%"code":"x1"%'
     OR r.service_types LIKE '%"code":"flu"%')`,
    [],
  ],
  // A listed filter with traits or another: from the values' starts, less the series failing the rest.
  [
    'state=ma&acceptingPatients=existptonly&includePast=true',
    `t.status = 0 AND lower(r.state) = 'ma' AND (r.accepting IS NULL OR r.accepting = 'existptonly')`,
    [],
  ],
  [
    'serviceTypeCode=57&isVirtual=false&startBefore=2026-11-23T13:17:00Z',
    `t.status = 0 AND r.service_types LIKE '%"code":"57"%' AND r.is_virtual = 0 AND t.start_ms >= ? AND t.start_ms <= ?`,
    [Date.parse(DEFAULT_NOW), Date.parse('2026-11-23T13:17:00Z')],
  ],
  [
    'specialty=394802001,http://snomed.info/sct|419772000&serviceTypeCode=124&includePast=true',
    `t.status = 0 AND r.specialties LIKE '%394802001%' AND r.service_types LIKE '%"code":"124"%'`,
    [],
  ],
  // Both specialties of one schedule: each of its series listed once (SlotIndex.listedSources), in a window
  // of two days too (more slots than walking the window's is worth).
  [
    'specialty=394802001,http://snomed.info/sct|419772000&includePast=true',
    `t.status = 0 AND r.specialties LIKE '%394802001%'`,
    [],
  ],
  [
    'specialty=http://snomed.info/sct|419772000,394802001&startAfter=2026-11-20T13:17:00Z&startBefore=2026-11-22T13:17:00Z',
    `t.status = 0 AND r.specialties LIKE '%394802001%' AND t.start_ms >= ? AND t.start_ms <= ?`,
    [Date.parse('2026-11-20T13:17:00Z'), Date.parse('2026-11-22T13:17:00Z')],
  ],
]

async function expectPagesAsPlain() {
  for (const [query, where, params] of CASES) {
    const total = db
      .prepare(
        `SELECT count(*) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id WHERE ${SERVED_SERIES} AND ${where}`,
      )
      .pluck()
      .get(...params) as number
    expect({ query, total: total > 1000 }).toEqual({ query, total: true })
    for (const [limit, offset] of [
      // Near the start: pages of the first few matches read only the series that can hold them.
      [1, 0],
      [3, 0],
      [4, 1],
      [2, 2],
      [25, 1000],
      [1, 1001],
      [7, 1234],
      [100, Math.floor(total / 2)],
      [25, total - 10],
      [3, total - 1],
    ] as const) {
      const response = await server.get(
        `/v1/scheduling/slots?${query}&limit=${limit}&offset=${offset}`,
        bearer(server.key),
      )
      expect(response.status).toBe(200)
      const listed = response.json.slots.map((slot: { id: string }) => slot.id)
      expect({ query, offset, total: response.json.total, listed }).toEqual({
        query,
        offset,
        total,
        listed: plainPage(where, params, limit, offset),
      })
    }
  }
}

beforeAll(async () => {
  server = await startTestServer({ plan: 'scale' })
  db = server.server.db
  feedDir = mkdtempSync(join(tmpdir(), 'svc-deep-'))
  for (const [slug, seed, shift] of [
    ['one', 1, 0],
    // Slots sharing a start are in id order: 'one-2:…' before 'one:…', though 'one' sorts before 'one-2'.
    ['one-2', 2, 0],
    // Starts not in whole seconds cannot be packed with their series' places: found from each series' starts.
    ['odd', 4, 500],
  ] as const) {
    writeStu1Feed(join(feedDir, slug))
    writeSlots(join(feedDir, slug), seed, shift)
    addPublisher(db, { slug, manifestUrl: join(feedDir, slug, '$bulk-publish') })
    await sync(slug)
  }
})
afterAll(async () => {
  await server.close()
  rmSync(feedDir, { recursive: true, force: true })
})

describe('filters naming every series', () => {
  it('are dropped from a search, and only those', () => {
    const index = new SlotIndex(db)
    const kept = (filters: Partial<SeriesFilters>) =>
      Object.entries(index.withoutWholeFilters({ groupKeys: [], ...filters }))
        .filter(([name, value]) => name !== 'groupKeys' && value !== undefined)
        .map(([name]) => name)
    expect(kept({ serviceTypeCode: ['57', '124'] })).toEqual([])
    expect(kept({ serviceTypeCode: ['124', '124', '57'], publisher: 'one', state: 'ma' })).toEqual([
      'publisher',
    ])
    // Every series but those of one schedule (sch-jones's), or of another publisher than the one asked.
    expect(kept({ serviceTypeCode: ['57'] })).toEqual(['serviceTypeCode'])
    expect(kept({ serviceTypeCode: ['57', '124'], publisher: 'none' })).toEqual(['publisher'])
    // The walk-in schedule names no specialty: its series are in none of the lists, by code or by token.
    expect(
      kept({ specialty: ['394802001', 'http://snomed.info/sct|394802001', '419772000', '207Q00000X'] }),
    ).toEqual(['specialty'])
  })
})

describe('deep pages', () => {
  it('list what the plain ordered query lists at the same offset', async () => {
    await expectPagesAsPlain()
  })

  it('still do after a publisher is disabled and after a re-sync of changed slots', async () => {
    setPublisherEnabled(db, 'one-2', false)
    await expectPagesAsPlain()
    setPublisherEnabled(db, 'one-2', true)
    writeSlots(join(feedDir, 'one'), 3)
    await sync('one')
    await expectPagesAsPlain()
  })

  it('still do as the clock moves past whole hours', async () => {
    try {
      for (const now of [
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T11:00:00.001Z',
        '2026-11-22T07:45:00.000Z',
      ]) {
        server.setNow(now)
        const where = 't.status = 0 AND t.start_ms >= ?'
        const total = db
          .prepare(
            `SELECT count(*) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id WHERE ${SERVED_SERIES} AND ${where}`,
          )
          .pluck()
          .get(Date.parse(now)) as number
        for (const offset of [1000, total - 5]) {
          const response = await server.get(
            `/v1/scheduling/slots?limit=10&offset=${offset}`,
            bearer(server.key),
          )
          expect(response.json.slots.map((slot: { id: string }) => slot.id)).toEqual(
            plainPage(where, [Date.parse(now)], 10, offset),
          )
        }
      }
    } finally {
      server.setNow(DEFAULT_NOW)
    }
  })
})
