import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import type { Db } from '../src/db/open.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { searchGroups } from '../src/scheduling/search/groups.js'
import { searchSlots } from '../src/scheduling/search/slots.js'
import { SERVED_SERIES } from '../src/scheduling/search/series.js'
import { SlotIndex } from '../src/scheduling/search/slotIndex.js'
import { packedStartsSteps } from '../src/scheduling/search/startTimes.js'
import { hourBitsSteps } from '../src/scheduling/search/windowGroups.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'
import { runNow } from '../src/workInSlices.js'
import { writeBulkFeed } from './support/bulkFeed.js'

/**
 * Grouped searches tally each matching series into its group in arrays kept from search to search
 * (src/scheduling/search/groups.ts), grown while a search tallies. A feed of more groups than they first hold,
 * each group with a series per service type, must be counted and paged as the plain query over the slots
 * says, and a group's service types listed in the same order whatever the order the search names them in.
 */
const LOCATIONS = 2_600
const FROM = Date.parse('2027-01-04T08:00:00Z')
const SERVICE_TYPE = 'http://terminology.hl7.org/CodeSystem/service-type'
const CODES = ['57', '58'] as const

let dir: string
let db: Db

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-many-groups-'))
  const locations = Array.from({ length: LOCATIONS }, (_, index) => ({
    resourceType: 'Location',
    id: `l${index}`,
    name: `Clinic ${index}`,
    address: { city: 'Springfield', state: 'IL' },
    // A third of them virtual: a filter on the series' traits alone.
    ...(index % 3 === 0
      ? {
          physicalType: {
            coding: [{ system: 'http://terminology.hl7.org/CodeSystem/location-physical-type', code: 'vi' }],
          },
        }
      : {}),
  }))
  // One schedule per location and service type: each location is a group of two series.
  const schedules = locations.flatMap((location) =>
    CODES.map((code) => ({
      resourceType: 'Schedule',
      id: `${location.id}-${code}`,
      serviceType: [{ coding: [{ system: SERVICE_TYPE, code }] }],
      actor: [{ reference: `Location/${location.id}` }],
    })),
  )
  // Starts spread so that groups tie on their next start and differ in count.
  const slots = schedules.flatMap((schedule, index) =>
    Array.from({ length: 1 + (index % 3) }, (_, nth) => {
      const start = FROM + (((index * 7) % 113) + nth * 131) * 900_000
      return {
        resourceType: 'Slot',
        id: `${schedule.id}-${nth}`,
        schedule: { reference: `Schedule/${schedule.id}` },
        status: 'free',
        start: new Date(start).toISOString(),
        end: new Date(start + 900_000).toISOString(),
        // The second service type's slots take new patients: a trait that splits each group.
        ...(schedule.id.endsWith(`-${CODES[1]}`)
          ? {
              extension: [
                {
                  url: 'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/patient-type',
                  valueCoding: { code: 'newpt' },
                },
              ],
            }
          : {}),
      }
    }),
  )
  const manifestUrl = writeBulkFeed(dir, { transactionTime: FROM, locations, schedules, slots })
  db = openDatabase(join(dir, 'svc.db'))
  addPublisher(db, { slug: 'many', manifestUrl })
  expect((await syncPublisher(db, 'many', { clock: () => FROM })).outcome).toBe('synced')
})

afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * The oracle: each group's free slots from `from` on (through `through`, included), counted and their first
 * start, in page order.
 */
function plainGroups(
  from: number,
  through = Number.MAX_SAFE_INTEGER,
  { code, virtual, accepting }: { code?: string; virtual?: boolean; accepting?: string } = {},
) {
  const rows = db
    .prepare(
      `SELECT r.group_key, count(*), min(t.start_ms) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id
       WHERE ${SERVED_SERIES} AND t.status = 0 AND t.start_ms >= ? AND t.start_ms <= ?
         AND (? IS NULL OR EXISTS (SELECT 1 FROM json_each(r.service_types) WHERE json_each.value ->> 'code' = ?))
         AND (? IS NULL OR r.is_virtual = ?)
         AND (? IS NULL OR r.accepting IS NULL OR r.accepting = ?)
       GROUP BY r.group_key ORDER BY min(t.start_ms), r.group_key`,
    )
    .raw()
    .all(
      from,
      through,
      code ?? null,
      code ?? null,
      ...Array<number | null>(2).fill(virtual === undefined ? null : Number(virtual)),
      accepting ?? null,
      accepting ?? null,
    ) as [string, number, number][]
  return rows.map(([key, count, next]) => ({ key, count, next: new Date(next).toISOString() }))
}

describe('grouped searches over more groups than their tallies first hold', () => {
  it('count and page every group as the plain query does, from moments before and among the starts', () => {
    // One index kept throughout, as a server keeps it; a fresh module's tallies grow during the first search.
    const index = new SlotIndex(db)
    for (const from of [FROM, FROM + 40 * 900_000, FROM + 140 * 900_000]) {
      const expected = plainGroups(from)
      expect(expected.length).toBeGreaterThan(1_024)
      for (const serviceTypeCode of [[...CODES], [...CODES].reverse(), undefined]) {
        const filters = { status: 'free' as const, startAfter: from, groupKeys: [], serviceTypeCode }
        for (const [offset, limit] of [
          [0, 50],
          [1_000, 100],
          [expected.length - 30, 50],
        ] as const) {
          const { groups, total } = searchGroups(index, filters, { offset, limit })
          expect({ from, serviceTypeCode, offset, total }).toEqual({
            from,
            serviceTypeCode,
            offset,
            total: expected.length,
          })
          expect(
            groups.map((group) => ({
              key: group.key,
              count: group.totalSlots,
              next: group.nextAvailableStart,
            })),
          ).toEqual(expected.slice(offset, offset + limit))
          // A group's series in the order the index holds them, whichever order the codes are asked in; from
          // the first start on, both of every group match.
          for (const group of groups) {
            const codes = group.serviceTypes.map((coding) => coding.code)
            expect(codes).toEqual(from === FROM ? [...CODES] : CODES.filter((code) => codes.includes(code)))
          }
        }
      }
    }
  })

  it('page every group of both service types from their lists as the plain query does, at deep offsets too', () => {
    // From each service type's kept groups (SlotIndex.groupsOfLists): every group is in both lists, so a
    // deep page is found by counting each list's groups from where the last count stopped (skipBefore).
    const index = new SlotIndex(db)
    for (const [from, startsNow] of [
      [undefined, undefined],
      [FROM + 40 * 900_000 + 1, true],
    ] as const) {
      const expected = plainGroups(from ?? 0)
      expect(expected.length).toBeGreaterThan(1_024)
      const filters = {
        status: 'free' as const,
        startAfter: from,
        startsNow,
        groupKeys: [],
        serviceTypeCode: [...CODES],
      }
      for (const offset of [0, 127, 128, 700, 1_000, 1_501, expected.length - 30, expected.length]) {
        const { groups, total } = searchGroups(index, filters, { offset, limit: 50 })
        expect({ from, offset, total }).toEqual({ from, offset, total: expected.length })
        expect(
          groups.map((group) => ({
            key: group.key,
            count: group.totalSlots,
            next: group.nextAvailableStart,
          })),
        ).toEqual(expected.slice(offset, offset + 50))
      }
    }
  })

  it('count and page every group in a window as the plain query does, from its hours and its edges', () => {
    const index = new SlotIndex(db)
    const minutes = 60_000
    // 5,200 series, ~10,400 slots over ~94 hours from FROM (a whole hour), at quarter hours.
    for (const [from, through] of [
      [FROM + 40 * 900_000, FROM + 40 * 900_000 + 6 * 60 * minutes], // whole hours, a start at each bound
      [FROM + 40 * 900_000 + 1, FROM + 52 * 900_000 - 1], // bounds between starts, not whole seconds
      [FROM + 131 * 900_000, FROM + 131 * 900_000], // one moment
      [FROM + 7 * 900_000, FROM + 301 * 900_000 - 1_000], // three days, both edges within an hour
      [FROM + 2 * 900_000, FROM + 5 * 900_000], // within one hour and the next
      [undefined, FROM + 50 * 60 * minutes], // up to a moment
      [FROM - 60 * minutes, FROM + 200 * 60 * minutes], // every slot
      [FROM + 40 * 900_000 + 1, undefined], // from a moment between starts, no end
      [FROM + 131 * 900_000, undefined], // from a start, no end
    ] as const) {
      // Every series; half of them (a filter on the series, not the groups: a group's other one is not
      // counted); two thirds of the groups by a trait (not virtual); half of each group's series by a trait
      // (not taking new patients); the half and a trait, marked from the code's list and tested on the trait.
      for (const [code, virtual, accepting] of [
        [undefined, undefined, undefined],
        ['57', undefined, undefined],
        [undefined, false, undefined],
        [undefined, undefined, 'existptonly'],
        ['57', false, undefined],
        ['57', undefined, 'existptonly'],
      ] as const) {
        const expected = plainGroups(from ?? 0, through, { code, virtual, accepting })
        expect(expected.length).toBeGreaterThan(10)
        const filters = {
          status: 'free' as const,
          startAfter: from,
          startBefore: through,
          groupKeys: [],
          serviceTypeCode: code === undefined ? undefined : [code],
          isVirtual: virtual,
          acceptingPatients: accepting,
        }
        expect(index.groupsInWindow(filters, 0, from, through, { offset: 0, limit: 1 })).toBeDefined()
        for (const [offset, limit] of [
          [0, 50],
          [7, 100],
          [Math.floor(expected.length / 2), 30],
          [expected.length - 15, 50],
        ] as const) {
          const { groups, total } = searchGroups(index, filters, { offset, limit })
          expect({ from, code, virtual, accepting, offset, total }).toEqual({
            from,
            code,
            virtual,
            accepting,
            offset,
            total: expected.length,
          })
          expect(
            groups.map((group) => ({
              key: group.key,
              count: group.totalSlots,
              next: group.nextAvailableStart,
            })),
          ).toEqual(expected.slice(offset, offset + limit))
          const only = code ?? (accepting ? CODES[0] : undefined)
          if (only)
            for (const group of groups)
              expect(group.serviceTypes.map((coding) => coding.code)).toEqual([only])
        }
      }
    }
    // Fewer series than WINDOW_MIN_SERIES wanted: tallied.
    const few = { status: 'free' as const, startBefore: FROM, groupKeys: ['nothing'] }
    expect(index.groupsInWindow(few, 0, undefined, FROM, { offset: 0, limit: 1 })).toBeUndefined()
    // Hours' bits take no more words than two a slot beyond a floor: slots three years apart in 64 series
    // are not held by hour (their windows are tallied), the same in one series are.
    const apart = Float64Array.from(
      [FROM / 1000, FROM / 1000 + 3 * 365 * 86_400],
      (second) => second * 2 ** 21,
    )
    expect(runNow(hourBitsSteps(apart, 64, (place) => place))).toBeUndefined()
    expect(runNow(hourBitsSteps(apart, 1, (place) => place))?.hours).toBe(3 * 365 * 24 + 1)
    // A publisher whose starts are not whole seconds, or whose groups are too many to pack, is not walked.
    const sync = { lo: 1, at: Int32Array.from([0, 2]), starts: Float64Array.from([FROM, FROM + 1]) }
    expect(runNow(packedStartsSteps(sync, [1], () => 0))).toBeUndefined()
    expect(
      runNow(packedStartsSteps({ ...sync, starts: Float64Array.from([FROM, FROM]) }, [1], () => 2 ** 21)),
    ).toBeUndefined()
    expect(
      runNow(packedStartsSteps({ ...sync, starts: Float64Array.from([FROM + 1000, FROM]) }, [1], () => 0)),
    ).toEqual(Float64Array.from([(FROM / 1000) * 2 ** 21, (FROM / 1000 + 1) * 2 ** 21]))
  })
})

/** The oracle for slot listings: the page of free slots in a window with one of the codes, in start then id order. */
function plainSlots(
  from: number,
  through: number,
  codes: readonly string[],
  limit: number,
  offset: number,
  virtual?: boolean,
) {
  const where = `${SERVED_SERIES} AND t.status = 0 AND t.start_ms >= ? AND t.start_ms <= ?
    AND EXISTS (SELECT 1 FROM json_each(r.service_types) WHERE json_each.value ->> 'code' IN (SELECT value FROM json_each(?)))
    ${virtual === undefined ? '' : `AND r.is_virtual = ${Number(virtual)}`}`
  const params = [from, through, JSON.stringify(codes)]
  const total = db
    .prepare(`SELECT count(*) FROM sched_slots t JOIN sched_series r ON r.id = t.series_id WHERE ${where}`)
    .pluck()
    .get(...params) as number
  const ids = db
    .prepare(
      `SELECT t.id FROM sched_slots t JOIN sched_series r ON r.id = t.series_id WHERE ${where}
       ORDER BY t.start_ms, t.id LIMIT ? OFFSET ?`,
    )
    .pluck()
    .all(...params, limit, offset) as string[]
  return { total, ids }
}

describe('slot listings in a window over several values of a list', () => {
  it('count and page the window as the plain query does, from the starts of the values’ series in it', () => {
    const index = new SlotIndex(db)
    const minutes = 60_000
    for (const [from, through] of [
      [FROM + 40 * 900_000, FROM + 40 * 900_000 + 6 * 60 * minutes], // whole hours, a start at each bound
      [FROM + 40 * 900_000 + 1, FROM + 52 * 900_000 - 1], // bounds between starts
      [FROM + 7 * 900_000, FROM + 301 * 900_000 - 1_000], // three days
    ] as const) {
      // With a trait too: the series failing it are not members, or are taken off the values' starts. One
      // value alone: from its starts, made on first use.
      for (const [codes, isVirtual] of [
        [CODES, undefined],
        [CODES, false],
        [CODES.slice(0, 1), undefined],
      ] as const) {
        const filters = {
          status: 'free' as const,
          startAfter: from,
          startBefore: through,
          groupKeys: [],
          serviceTypeCode: [...codes],
          isVirtual,
        }
        // The window holds few slots for the series its lists name: walked, not counted per series.
        expect(index.listedSources(filters, 0, from, through, true)).toBeDefined()
        const { total } = plainSlots(from, through, codes, 1, 0, isVirtual)
        expect(total).toBeGreaterThan(100)
        for (const [offset, limit] of [
          [0, 25],
          [7, 100],
          [Math.floor(total / 2), 30],
          [total - 5, 25],
        ] as const) {
          const found = searchSlots(index, filters, { offset, limit })
          expect({ from, offset, total: found.total, ids: found.slots.map((slot) => slot.id) }).toEqual({
            from,
            offset,
            ...plainSlots(from, through, codes, limit, offset, isVirtual),
          })
        }
      }
    }
  })
})
