import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, STORE_SCHEMA } from '../src/app/store.js'
import { appliedSteps } from '../src/db/migrate.js'
import { type Db, openSqliteFile } from '../src/db/sqlite.js'
import { addPublisher, removePublisher } from '../src/scheduling/publishers.js'
import type { SlotFilters } from '../src/scheduling/search/matches.js'
import { searchSlots } from '../src/scheduling/search/slots.js'
import { SlotIndex } from '../src/scheduling/search/slotIndex.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { SMART_EXAMPLES } from './support/fixtures.js'
import { stepsThrough, writeNumberedFile } from './support/legacyStore.js'
import { writeStu1Feed } from './support/stu1Feed.js'

/**
 * Each sync writes its slots to a part of their own, and a search across publishers merges the parts in start
 * order (src/scheduling/search.ts). Small pages near the start take that merge, large ones collect the
 * matching series' slots and sort them: the two must list the same slots in the same order.
 */

let server: TestServer
let feedDir: string

const sync = (slug: string) => syncPublisher(server.server.db, slug, { clock: server.now })
const api = async (path: string) => {
  const response = await server.get(path, bearer(server.key))
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.text}`)
  return response.json
}
/** Every slot id of a listing, read a page of `limit` at a time. */
async function walk(query: string, limit: number): Promise<string[]> {
  const seen: string[] = []
  for (let offset = 0, total = 1; offset < total; offset += limit) {
    const page = await api(`/v1/scheduling/slots?${query}&limit=${limit}&offset=${offset}`)
    total = page.total
    seen.push(...page.slots.map((slot: { id: string }) => slot.id))
  }
  return seen
}

beforeAll(async () => {
  server = await startTestServer({ plan: 'scale' })
  feedDir = mkdtempSync(join(tmpdir(), 'svc-parts-'))
  cpSync(SMART_EXAMPLES, join(feedDir, 'smart'), { recursive: true })
  writeStu1Feed(join(feedDir, 'stu1'))
  writeStu1Feed(join(feedDir, 'stu1-copy'))
  for (const slug of ['smart', 'stu1', 'stu1-copy']) {
    addPublisher(server.server.db, { slug, manifestUrl: join(feedDir, slug, '$bulk-publish') })
    expect((await sync(slug)).outcome).toBe('synced')
  }
})
afterAll(async () => {
  await server.close()
  rmSync(feedDir, { recursive: true, force: true })
})

/** The slot order holds every stored slot's keys once, and nothing else (src/scheduling/schema.ts). */
function expectSlotOrderWhole(db: Db): void {
  const keys = 'part, status, start_ms, id, series_id'
  const stored = db.prepare(`SELECT ${keys} FROM sched_slots ORDER BY ${keys}`).raw().all()
  expect(stored.length).toBeGreaterThan(0)
  expect(db.prepare(`SELECT ${keys} FROM sched_slot_order`).raw().all()).toEqual(stored)
}

describe('slot parts', () => {
  it('merge three publishers in start order: every page size lists the same slots', async () => {
    for (const query of [
      'includePast=true',
      'includePast=true&acceptingPatients=newpt',
      'includePast=true&serviceTypeCode=57,flu',
      'includePast=true&isVirtual=false&state=MA',
      'startAfter=2021-03-10T00:00:00Z&startBefore=2026-11-23T00:00:00Z',
    ]) {
      const whole = await walk(query, 100)
      expect(whole.length).toBeGreaterThan(3)
      expect(new Set(whole).size).toBe(whole.length)
      for (const limit of [2, 7]) expect(await walk(query, limit)).toEqual(whole)
    }
    // Both copies of the STU 1 feed are served, each slot under its own publisher.
    const copies = await walk('includePast=true&npi=1987654321', 1)
    expect(copies.sort()).toEqual(['stu1-copy:j1', 'stu1-copy:j2', 'stu1:j1', 'stu1:j2'])
  })

  it('a re-sync writes a new part and leaves no slot in the old one', async () => {
    const db = server.server.db
    const partOf = (slug: string) =>
      db.prepare('SELECT slot_part FROM publishers WHERE slug = ?').pluck().get(slug) as number
    const before = partOf('stu1')
    const listing = await walk('includePast=true', 2)
    const manifestPath = join(feedDir, 'stu1', '$bulk-publish')
    writeFileSync(
      manifestPath,
      readFileSync(manifestPath, 'utf8').replace('"request"', '"note":"again","request"'),
    )
    server.setNow(server.now() + 61_000)
    expect((await sync('stu1')).outcome).toBe('synced')
    expect(partOf('stu1')).toBeGreaterThan(Math.max(before, partOf('smart'), partOf('stu1-copy')))
    const parts = db.prepare('SELECT DISTINCT part FROM sched_slots ORDER BY part').pluck().all()
    expect(parts).toEqual([partOf('smart'), partOf('stu1-copy'), partOf('stu1')].sort((a, b) => a - b))
    expectSlotOrderWhole(db)
    expect(await walk('includePast=true', 2)).toEqual(listing)
  })

  it('a publisher removed, added again and synced between two searches is served from its new sync', async () => {
    const db = server.server.db
    const highest = () => db.prepare('SELECT max(slot_part) FROM publishers').pluck().get() as number
    // stu1 holds the highest part (the test before re-synced it), and this server's index has loaded it.
    expect(db.prepare('SELECT slot_part FROM publishers WHERE slug = ?').pluck().get('stu1')).toBe(highest())
    expect(
      (await walk('includePast=true&npi=1987654321', 100)).filter((id) => id.startsWith('stu1:')),
    ).toEqual(['stu1:j1', 'stu1:j2'])
    removePublisher(db, 'stu1')
    addPublisher(db, { slug: 'stu1', manifestUrl: join(feedDir, 'smart', '$bulk-publish') })
    expect((await sync('stu1')).outcome).toBe('synced')

    expectSlotOrderWhole(db)
    const smart = await walk('includePast=true', 100)
    const asStu1 = smart.filter((id) => id.startsWith('smart:')).map((id) => id.replace('smart:', 'stu1:'))
    expect(smart.filter((id) => id.startsWith('stu1:')).sort()).toEqual(asStu1.sort())
  })
})

describe('the slot-parts step', () => {
  it('upgrades a version-4 store in place: every slot found again, in the same order', async () => {
    const path = join(feedDir, 'upgrade.db')
    const clock = () => Date.parse('2026-11-21T10:00:00Z')
    // A store as version 5 left it (with 33's part counter, which a sync now needs), with slots, then taken
    // back to version 4's shape: one by-start index over every publisher, no parts.
    const db = openSqliteFile(path)
    const partCounter = stepsThrough(33).filter((step) => step.id === 'scheduling/part-counter')
    // A sync now also writes slot starts and the slot order: their steps make them again on open.
    const starts = STORE_SCHEMA.main.filter((step) =>
      ['scheduling/series-starts', 'scheduling/slot-order'].includes(step.id),
    )
    writeNumberedFile(db, [...stepsThrough(5), ...partCounter, ...starts], 33)
    for (const slug of ['smart', 'stu1-copy']) {
      addPublisher(db, { slug, manifestUrl: join(feedDir, slug, '$bulk-publish') })
      expect((await syncPublisher(db, slug, { clock })).outcome).toBe('synced')
    }
    const filters: SlotFilters = { status: 'free', groupKeys: [] }
    const listing = (store: Db, limit: number) =>
      searchSlots(new SlotIndex(store), filters, { limit, offset: 0 }).slots.map((slot) => slot.id)
    const expected = listing(db, 100)
    db.exec(`
      DROP TABLE sched_slot_order;
      ALTER TABLE sched_slots DROP COLUMN part;
      ALTER TABLE publishers DROP COLUMN slot_part;
      DROP TABLE sched_part_counter;
      CREATE INDEX sched_slots_by_start ON sched_slots(status, start_ms, id);
      PRAGMA user_version = 4;
    `)
    db.close()
    const upgraded = openDatabase(path)
    expect(appliedSteps(upgraded)).toContain('scheduling/slot-parts')
    expect(listing(upgraded, 100)).toEqual(expected)
    expect(listing(upgraded, 5)).toEqual(expected.slice(0, 5))
    const unparted = upgraded.prepare('SELECT count(*) FROM sched_slots WHERE part = 0').pluck().get()
    expect(unparted).toBe(0)
    expectSlotOrderWhole(upgraded)
    upgraded.close()
  })
})
