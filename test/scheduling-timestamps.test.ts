import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { parseLenientTimestamp } from '../src/scheduling/sync/feedResources.js'
import { syncPublisher } from '../src/scheduling/sync/syncPublisher.js'

const dir = mkdtempSync(join(tmpdir(), 'svc-timestamps-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('slot timestamps', () => {
  it('reads full UTC instants as Date.parse does, with 0 to 3 digits of fraction', () => {
    // A fixed linear congruential sequence: the same instants every run.
    let seed = 7
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed % below
    }
    for (let n = 0; n < 2_000; n++) {
      const ms = Date.UTC(1970, 0, 1) + next(230 * 365) * 86_400_000 + next(86_400_000)
      const iso = new Date(ms).toISOString()
      const digits = next(4)
      const text =
        digits === 0
          ? iso.replace(/\.\d{3}Z$/, 'Z')
          : iso.replace(/(\.\d{1,3})\d*Z$/, (_, kept) => `${kept.slice(0, digits + 1)}Z`)
      expect(parseLenientTimestamp(text), text).toBe(Date.parse(text))
    }
    expect(parseLenientTimestamp('2026-11-24T14:00:00.5Z')).toBe(Date.parse('2026-11-24T14:00:00.500Z'))
    expect(parseLenientTimestamp('2026-11-24T14:00:00.25Z')).toBe(Date.parse('2026-11-24T14:00:00.250Z'))
    expect(parseLenientTimestamp('2024-02-29T23:59:59.999Z')).toBe(Date.parse('2024-02-29T23:59:59.999Z'))
  })

  it('reads the lenient forms real feeds send', () => {
    const utc = Date.parse('2026-11-23T14:00:00Z')
    expect(parseLenientTimestamp('2026-11-23T09:00-05')).toBe(utc)
    expect(parseLenientTimestamp('2026-11-23T09:00:00-05:00')).toBe(utc)
    expect(parseLenientTimestamp('2026-11-23T14:00')).toBe(utc)
    expect(parseLenientTimestamp(' 2026-11-23T14:00:00Z ')).toBe(utc)
    expect(parseLenientTimestamp('2026-11-23T14:00:00.123456Z')).toBe(utc + 123)
    expect(parseLenientTimestamp('0050-01-01T00:00:00Z')).toBe(Date.parse('0050-01-01T00:00:00Z'))
  })

  it('refuses a field out of its range, not a number in its place', () => {
    for (const text of [
      '2026-13-01T10:00:00Z',
      '2026-00-01T10:00:00Z',
      '2026-01-00T10:00:00Z',
      '2026-01-32T10:00:00Z',
      '2026-01-01T25:00:00Z',
      '2026-01-01T10:60:00Z',
      '2026-01-01T10:00:60Z',
      '2026-01-01T10:00:0xZ',
      '2026-01-01 10:00:00Z',
      '2026-01-01T10:00:00.Z',
      '',
      'tomorrow',
    ])
      expect(parseLenientTimestamp(text), text).toBeUndefined()
    expect(parseLenientTimestamp(1_764_000_000_000)).toBeUndefined()
  })

  it('reports a slot whose start is out of range at its line, and counts only the slots it wrote', async () => {
    const feed = join(dir, 'feed')
    const manifest = join(feed, '$bulk-publish')
    const write = (name: string, records: unknown[]) =>
      writeFileSync(join(feed, name), `${records.map((record) => JSON.stringify(record)).join('\n')}\n`)
    mkdirSync(feed)
    write('locations.ndjson', [
      { resourceType: 'Location', id: 'l1', address: { city: 'Boston', state: 'MA' } },
    ])
    write('schedules.ndjson', [{ resourceType: 'Schedule', id: 's1', actor: [{ reference: 'Location/l1' }] }])
    const slot = (id: string, start: string, end: string) => ({
      resourceType: 'Slot',
      id,
      schedule: { reference: 'Schedule/s1' },
      status: 'free',
      start,
      end,
    })
    write('slots.ndjson', [
      slot('a', '2026-12-01T10:00:00Z', '2026-12-01T10:30:00Z'),
      slot('b', '2026-13-01T10:00:00Z', '2026-12-01T10:30:00Z'),
      slot('c', '2026-12-01T11:00:00Z', '2026-12-01T11:00:60Z'),
    ])
    const outputs = [
      ['Location', 'locations.ndjson'],
      ['Schedule', 'schedules.ndjson'],
      ['Slot', 'slots.ndjson'],
    ].map(([type, url]) => ({ type, url }))
    writeFileSync(manifest, JSON.stringify({ transactionTime: '2026-11-21T08:00:00Z', output: outputs }))
    const db = openDatabase(join(dir, 'svc.db'))
    try {
      addPublisher(db, { slug: 'p', manifestUrl: manifest })
      const report = await syncPublisher(db, 'p', { clock: () => Date.parse('2026-11-25T00:00:00Z') })
      expect(report.problems.map(({ line, message }) => `${line}: ${message}`)).toEqual([
        '2: Slot b has an unreadable start "2026-13-01T10:00:00Z"',
        '3: Slot c has an unreadable end "2026-12-01T11:00:60Z"',
      ])
      const stored = db.prepare('SELECT id FROM sched_slots').pluck().all()
      expect(stored).toEqual(['p:a'])
      expect(report.written).toBe(stored.length)
    } finally {
      db.close()
    }
  })
})
