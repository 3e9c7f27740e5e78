import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db/open.js'
import { addPublisher, setPublisherEnabled } from '../src/scheduling/publishers.js'
import type { SlotStatus } from '../src/scheduling/model.js'
import { answerHoldsThrough, type SlotFilters } from '../src/scheduling/search/matches.js'
import { searchGroups } from '../src/scheduling/search/groups.js'
import { searchSlots } from '../src/scheduling/search/slots.js'
import { SlotIndex } from '../src/scheduling/search/slotIndex.js'
import { type SeriesFilters, SERVED_SERIES, statusIndex } from '../src/scheduling/search/series.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'
import { bearer, DEFAULT_NOW, startTestServer, type TestServer } from './support/harness.js'
import { SMART_EXAMPLES } from './support/fixtures.js'
import { writeStu1Feed } from './support/stu1Feed.js'

/**
 * A search over every served series takes its count, and the moment its answer stops holding, from each
 * publisher's served starts sorted together (src/scheduling/search/slotIndex.ts) instead of looking at each
 * series. Whatever happened before (a sync, a disable, the clock moving either way), they must say what the
 * plain query over the slots table says.
 */

let server: TestServer
let feedDir: string
let db: Db

/** Syncs run on a clock of their own, a minute apart (past the once-a-minute guard); searches name their moment. */
let syncedAt = Date.parse(DEFAULT_NOW)
const sync = async (slug: string) => {
  syncedAt += 61_000
  expect((await syncPublisher(db, slug, { clock: () => syncedAt })).outcome).toBe('synced')
}

/** The oracle: served slots of the status from `now` on, counted and their first start, straight from SQL. */
function plain(status: SlotStatus, now: number) {
  const [total, next] = db
    .prepare(
      `SELECT count(*), min(t.start_ms) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id
       WHERE ${SERVED_SERIES} AND t.status = ? AND t.start_ms >= ?`,
    )
    .raw()
    .get(statusIndex(status), now) as [number, number | null]
  return {
    total,
    first: next === null ? undefined : new Date(next).toISOString(),
    through: next ?? undefined,
  }
}

/** The same, as the unfiltered search from `now` answers it. */
function searched(status: SlotStatus, now: number) {
  const filters: SlotFilters = { status, startAfter: now, startsNow: true, groupKeys: [] }
  const { slots, total } = searchSlots(new SlotIndex(db), filters, { limit: 1, offset: 0 })
  return {
    total,
    first: slots[0]?.start as string | undefined,
    through: answerHoldsThrough(new SlotIndex(db), filters, now),
  }
}

/** Every stored slot's start (any publisher, status or patient type), a ms either side, and the far ends. */
function moments(): number[] {
  const starts = db.prepare('SELECT DISTINCT start_ms FROM sched_slots').pluck().all() as number[]
  const around = starts.flatMap((start) => [start - 1, start, start + 1])
  return [...new Set([Number.MIN_SAFE_INTEGER, 0, ...around, Date.parse('2100-01-01T00:00:00Z')])].sort(
    (a, b) => a - b,
  )
}

function expectSameAtEvery(order: number[]) {
  for (const status of ['free', 'busy'] as const) {
    for (const now of order) expect({ now, ...searched(status, now) }).toEqual({ now, ...plain(status, now) })
  }
}

beforeAll(async () => {
  server = await startTestServer({ plan: 'scale' })
  db = server.server.db
  feedDir = mkdtempSync(join(tmpdir(), 'svc-served-'))
  cpSync(SMART_EXAMPLES, join(feedDir, 'smart'), { recursive: true })
  writeStu1Feed(join(feedDir, 'stu1'))
  writeStu1Feed(join(feedDir, 'stu1-copy'))
  for (const slug of ['smart', 'stu1', 'stu1-copy']) {
    addPublisher(db, { slug, manifestUrl: join(feedDir, slug, '$bulk-publish') })
    await sync(slug)
  }
})
afterAll(async () => {
  await server.close()
  rmSync(feedDir, { recursive: true, force: true })
})

describe('unfiltered search from a moment', () => {
  it('counts as the plain query does as the clock passes each start, forward, back and jumping', () => {
    const forward = moments()
    expectSameAtEvery(forward)
    expectSameAtEvery([...forward].reverse())
    // Far jumps both ways: odd places first, then even ones from the end.
    expectSameAtEvery([
      ...forward.filter((_, index) => index % 2 === 1),
      ...forward.filter((_, index) => index % 2 === 0).reverse(),
    ])
  })

  it('never counts nopt slots nor waits for one: the answer holds through the next served start', () => {
    // stu1's r1 (nopt, 2026-11-22T16:00Z) lies between f2 (15:10Z) and s1 (2026-11-23T14:00Z).
    const now = Date.parse('2026-11-22T15:10:00.001Z')
    expect(searched('free', now)).toMatchObject({
      first: '2026-11-23T14:00:00.000Z',
      through: Date.parse('2026-11-23T14:00:00Z'),
    })
  })

  it('follows a disable and an enable of a publisher', () => {
    const order = moments()
    setPublisherEnabled(db, 'stu1', false)
    expectSameAtEvery(order)
    setPublisherEnabled(db, 'stu1-copy', false)
    expectSameAtEvery(order)
    expect(searched('free', Date.parse(DEFAULT_NOW)).total).toBe(0)
    setPublisherEnabled(db, 'stu1', true)
    setPublisherEnabled(db, 'stu1-copy', true)
    expectSameAtEvery(order)
  })

  it('follows a re-sync that adds and drops slots', async () => {
    const now = Date.parse(DEFAULT_NOW)
    const before = searched('free', now)
    const slotsFile = join(feedDir, 'stu1', 'slots.ndjson')
    // Drops s1 and adds one slot before every other: the first start and the count both move.
    const lines = readFileSync(slotsFile, 'utf8')
      .split('\n')
      .filter((line) => !line.includes('"id":"s1"'))
    writeFileSync(slotsFile, lines.join('\n'))
    appendFileSync(
      slotsFile,
      `${JSON.stringify({
        resourceType: 'Slot',
        id: 'early',
        schedule: { reference: 'Schedule/sch-jones' },
        status: 'free',
        start: '2026-11-21T11:00:00Z',
        end: '2026-11-21T11:20:00Z',
      })}\n`,
    )
    const manifest = join(feedDir, 'stu1', '$bulk-publish')
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"request"', '"note":"again","request"'))
    await sync('stu1')
    const after = searched('free', now)
    expect(after).toEqual(plain('free', now))
    expect(after.total).toBe(before.total)
    expect(after.first).toBe('2026-11-21T11:00:00.000Z')
    expectSameAtEvery(moments())
  })

  it('answers over HTTP as the plain query does while the clock moves, kept answers included', async () => {
    try {
      for (const now of moments().filter((moment) => moment > Date.parse('2026-01-01T00:00:00Z'))) {
        server.setNow(now)
        const response = await server.get('/v1/scheduling/slots?limit=1', bearer(server.key))
        const { total, first } = plain('free', now)
        expect({ now, total: response.json.total, first: response.json.slots[0]?.start }).toEqual({
          now,
          total,
          first,
        })
      }
    } finally {
      server.setNow(DEFAULT_NOW)
    }
  })
})

/**
 * A search with a series filter counts each matching series from its slot starts (startTimes.ts) whenever
 * the asked time does not hold all of them: slots already past, or a window. Listings and groups must say
 * what the plain query over the slots table says, at every moment and for windows between them.
 */
describe('filtered and grouped searches at any moment and in any window', () => {
  const FILTERS: { name: string; filters: Omit<SeriesFilters, 'groupKeys'>; sql: string }[] = [
    { name: 'every series', filters: {}, sql: '1 = 1' },
    { name: 'one publisher', filters: { publisher: 'stu1' }, sql: "r.publisher = 'stu1'" },
    { name: 'in person', filters: { isVirtual: false }, sql: 'r.is_virtual = 0' },
    // One listed filter alone: grouped searches take their groups from the lists' kept groups (listGroups.ts).
    // SMART's schedules name two of these codes each: a series in several lists counts once.
    {
      name: 'service types',
      filters: { serviceTypeCode: ['57', 'covid19-immunization', '124'] },
      sql: "EXISTS (SELECT 1 FROM json_each(r.service_types) WHERE json_extract(value, '$.code') IN ('57', 'covid19-immunization', '124'))",
    },
    { name: 'one state', filters: { state: 'MA' }, sql: "lower(r.state) = 'ma'" },
    // Listed by value too: a value no series holds finds nothing without looking at a series.
    {
      name: 'appointment type',
      filters: { appointmentType: 'WALKIN' },
      sql: "r.appointment_type = 'WALKIN'",
    },
    { name: 'no appointment type held', filters: { appointmentType: 'NONE' }, sql: '0 = 1' },
    // Two publishers name the first two; the index looks a list up only in the publishers naming its NPIs.
    {
      name: 'NPIs',
      filters: { npi: ['1234567893', '1987654321', '1000000000'] },
      sql: "EXISTS (SELECT 1 FROM json_each(r.npis) WHERE value IN ('1234567893', '1987654321', '1000000000'))",
    },
  ]

  /** The oracle: matches per group key (count, first start) and overall, straight from SQL. */
  function plainGroups(sql: string, status: SlotStatus, from: number, through: number | undefined) {
    const rows = db
      .prepare(
        `SELECT r.group_key, count(*), min(t.start_ms) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id
         WHERE ${SERVED_SERIES} AND ${sql} AND t.status = ? AND t.start_ms >= ? AND t.start_ms <= ?
         GROUP BY r.group_key ORDER BY min(t.start_ms), r.group_key`,
      )
      .raw()
      .all(statusIndex(status), from, through ?? Number.MAX_SAFE_INTEGER) as [string, number, number][]
    return rows.map(([key, count, next]) => ({ key, count, next: new Date(next).toISOString() }))
  }

  function searchedGroups(index: SlotIndex, filters: SlotFilters, page = { limit: 1000, offset: 0 }) {
    const { groups, total } = searchGroups(index, filters, page)
    if (page.offset === 0 && groups.length < page.limit) expect(total).toBe(groups.length)
    return groups.map((group) => ({
      key: group.key,
      count: group.totalSlots,
      next: group.nextAvailableStart,
    }))
  }

  /** `index`: one kept from search to search (its figures from a moment follow the clock), or one each. */
  function expectSame(filters: SlotFilters, sql: string, index?: SlotIndex) {
    const indexOf = () => index ?? new SlotIndex(db)
    const expected = plainGroups(sql, filters.status, filters.startAfter ?? 0, filters.startBefore)
    expect({ filters, groups: searchedGroups(indexOf(), filters) }).toEqual({ filters, groups: expected })
    // Pages of the same order, the groups on them sorted apart from the others.
    for (const [offset, limit] of [
      [0, 1],
      [1, 1],
      [1, 2],
      [2, 3],
    ] as const) {
      expect({
        filters,
        offset,
        limit,
        groups: searchedGroups(indexOf(), filters, { offset, limit }),
      }).toEqual({
        filters,
        offset,
        limit,
        groups: expected.slice(offset, offset + limit),
      })
    }
    const { slots, total } = searchSlots(indexOf(), filters, { limit: 1, offset: 0 })
    expect({ filters, total, first: slots[0]?.start }).toEqual({
      filters,
      total: expected.reduce((sum, group) => sum + group.count, 0),
      first: expected.map((group) => group.next).sort()[0],
    })
  }

  it('counts as the plain query does from every moment, as the clock passes each start', () => {
    for (const { filters, sql } of FILTERS) {
      for (const status of ['free', 'busy'] as const) {
        for (const now of moments()) {
          expectSame({ status, startAfter: now, startsNow: true, groupKeys: [], ...filters }, sql)
        }
      }
    }
  })

  // An explicit startAfter is a moment of the caller's own: grouped searches take it as a window with no end.
  it('counts as the plain query does from a moment the caller names, with no end', () => {
    for (const { filters, sql } of FILTERS) {
      for (const status of ['free', 'busy'] as const) {
        for (const from of moments()) expectSame({ status, startAfter: from, groupKeys: [], ...filters }, sql)
      }
    }
  })

  it('counts as the plain query does with one index kept as the clock moves forward, back and jumping', () => {
    const forward = moments()
    const orders = [
      forward,
      [...forward].reverse(),
      [
        ...forward.filter((_, index) => index % 2 === 1),
        ...forward.filter((_, index) => index % 2 === 0).reverse(),
      ],
    ]
    for (const { filters, sql } of FILTERS) {
      const index = new SlotIndex(db)
      for (const now of orders.flat())
        expectSame(
          { status: 'free', startAfter: now, startsNow: true, groupKeys: [], ...filters },
          sql,
          index,
        )
    }
  })

  it('finds an NPI list in the publishers naming it as they are disabled, enabled and synced again', async () => {
    const { filters, sql } = FILTERS.find(({ name }) => name === 'NPIs') as (typeof FILTERS)[number]
    const index = new SlotIndex(db)
    const check = () => expectSame({ status: 'free', startAfter: 0, groupKeys: [], ...filters }, sql, index)
    check()
    setPublisherEnabled(db, 'stu1', false)
    check()
    setPublisherEnabled(db, 'stu1-copy', false)
    check()
    expect(
      searchSlots(index, { status: 'free', groupKeys: [], ...filters }, { limit: 1, offset: 0 }).total,
    ).toBe(0)
    setPublisherEnabled(db, 'stu1', true)
    check()
    setPublisherEnabled(db, 'stu1-copy', true)
    check()
    // A new sync of the same slots: the publisher is loaded anew and found through its NPIs again.
    const manifest = join(feedDir, 'stu1-copy', '$bulk-publish')
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"request"', '"note":"again","request"'))
    await sync('stu1-copy')
    check()
  })

  it('counts as the plain query does in windows between stored starts', () => {
    const order = moments()
    for (const { filters, sql } of FILTERS) {
      for (let from = 0; from < order.length; from += 3) {
        for (let through = from; through < order.length; through += 5) {
          expectSame(
            {
              status: 'free',
              startAfter: order[from] as number,
              startBefore: order[through] as number,
              groupKeys: [],
              ...filters,
            },
            sql,
          )
        }
      }
    }
  })
})
