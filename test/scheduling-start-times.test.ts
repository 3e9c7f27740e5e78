import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, runCliJson } from './support/cli.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/** 200 locations with 60 slots each, every 3 hours from the day after "now", offset by location. */
const LOCATIONS = 200
const SLOTS_EACH = 60
const HOUR = 3_600_000

function writeLargeFeed(dir: string, from: number): string {
  mkdirSync(dir, { recursive: true })
  const lines = (count: number, line: (index: number) => unknown) =>
    `${Array.from({ length: count }, (_, index) => JSON.stringify(line(index))).join('\n')}\n`
  writeFileSync(
    join(dir, 'locations.ndjson'),
    lines(LOCATIONS, (index) => ({
      resourceType: 'Location',
      id: `l${index}`,
      name: `Clinic ${index}`,
      address: { city: `City ${index % 50}`, state: 'MA', postalCode: '02114' },
    })),
  )
  writeFileSync(
    join(dir, 'schedules.ndjson'),
    lines(LOCATIONS, (index) => ({
      resourceType: 'Schedule',
      id: `s${index}`,
      serviceType: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/service-type', code: '57' }] },
      ],
      actor: [{ reference: `Location/l${index}` }],
    })),
  )
  const slotFile = (part: number) => `slots-${part}.ndjson`
  for (let part = 0; part < 4; part++)
    writeFileSync(
      join(dir, slotFile(part)),
      lines((LOCATIONS / 4) * SLOTS_EACH, (index) => {
        const location = part * (LOCATIONS / 4) + Math.floor(index / SLOTS_EACH)
        const start = from + ((index % SLOTS_EACH) * 3 + (location % 3)) * HOUR
        return {
          resourceType: 'Slot',
          id: `${location}-${index % SLOTS_EACH}`,
          schedule: { reference: `Schedule/s${location}` },
          status: 'free',
          start: new Date(start).toISOString(),
          end: new Date(start + 1_800_000).toISOString(),
        }
      }),
    )
  const manifest = join(dir, '$bulk-publish')
  writeFileSync(
    manifest,
    JSON.stringify({
      transactionTime: new Date(from).toISOString(),
      request: '$bulk-publish',
      output: [
        { type: 'Location', url: 'locations.ndjson' },
        { type: 'Schedule', url: 'schedules.ndjson' },
        ...[0, 1, 2, 3].map((part) => ({ type: 'Slot', url: slotFile(part) })),
      ],
      error: [],
    }),
  )
  return manifest
}

/** Every slot of the feed in the order pages list them: by start, then id. */
function expectedOrder(from: number): string[] {
  const slots: [number, string][] = []
  for (let location = 0; location < LOCATIONS; location++)
    for (let index = 0; index < SLOTS_EACH; index++)
      slots.push([from + (index * 3 + (location % 3)) * HOUR, `${location}-${index}`])
  return slots.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)).map(([, id]) => id)
}

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
}, 60_000)
afterAll(() => t.close())

describe('deep pages from the slot starts a sync stores', () => {
  it('answer as a walk of every slot would, whether the starts were stored by the sync or read from the slots', async () => {
    const from = t.now() + 24 * HOUR
    const manifest = writeLargeFeed(join(t.dir, 'feed'), from)
    const env = { SVC_DB: t.dbPath }
    await runCliJson(['publishers', 'add', 'large', '--manifest', manifest], env)
    await runCliJson(['import', 'publishers'], env)
    const stored = t.server.db.prepare('SELECT count(*) FROM sched_series_starts').pluck().get()
    expect(stored).toBe(LOCATIONS)

    const order = expectedOrder(from)
    const pageIds = async () => {
      const ids: string[] = []
      for (const offset of [0, 1_000, 5_999, 11_990]) {
        const page = await t.get(`/v1/scheduling/slots?offset=${offset}&limit=10`, bearer(t.key))
        expect(page.status).toBe(200)
        expect(page.json.total).toBe(LOCATIONS * SLOTS_EACH)
        ids.push(...page.json.slots.map((slot: { id: string }) => slot.id.replace(/^large:/, '')))
      }
      return ids
    }
    const expected = [0, 1_000, 5_999, 11_990].flatMap((offset) => order.slice(offset, offset + 10))
    expect(await pageIds()).toEqual(expected)

    // A store synced before starts were stored: its series have none, and the starts come from the slots.
    t.server.db.exec('DELETE FROM sched_series_starts')
    expect((await runCli(['publishers', 'disable', 'large'], env)).code).toBe(0)
    expect((await runCli(['publishers', 'enable', 'large'], env)).code).toBe(0)
    expect(await pageIds()).toEqual(expected)
  }, 60_000)
})
