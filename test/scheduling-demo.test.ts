import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadDemoScheduling, schedulingDemo } from '../src/scheduling/demo.js'
import { addPublisher, findPublisher } from '../src/scheduling/publishers.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/** `svc demo` serves the bundled 2021 examples moved to the current week, so a search from now finds slots. */

const BUNDLED = join(import.meta.dirname, '../data/scheduling/smart-examples')
const WEEK_MS = 7 * 86_400_000

/** Every bundled slot's start, by id. */
function bundledStarts(): Map<string, number> {
  const starts = new Map<string, number>()
  for (const file of readdirSync(BUNDLED).filter((name) => name.startsWith('slots-'))) {
    for (const line of readFileSync(join(BUNDLED, file), 'utf8').split('\n').filter(Boolean)) {
      const slot = JSON.parse(line)
      starts.set(`smart-examples:${slot.id}`, Date.parse(slot.start))
    }
  }
  return starts
}

describe('demo scheduling feed', () => {
  let server: TestServer
  beforeAll(async () => {
    // A Saturday: the feed's first week began on the Monday before.
    server = await startTestServer({ now: '2026-11-21T10:00:30.000Z' })
  })
  afterAll(() => server.close())

  it('moves an earlier demo store off the bundled files and serves every slot whole weeks later', async () => {
    const db = server.server.db
    addPublisher(db, { slug: 'smart-examples', manifestUrl: join(BUNDLED, '$bulk-publish') })

    const report = await loadDemoScheduling(db, join(server.dir, 'demo-feed'), server.now())
    const bundled = bundledStarts()
    expect(report).toMatchObject({ outcome: 'synced', written: bundled.size })
    expect(findPublisher(db, 'smart-examples')?.manifestUrl).toBe(
      join(server.dir, 'demo-feed', '$bulk-publish'),
    )

    const slots: { id: string; start: string }[] = []
    for (let offset = 0; offset < bundled.size; offset += 100) {
      const page = await server.get(
        `/v1/scheduling/slots?includePast=true&limit=100&offset=${offset}`,
        bearer(server.key),
      )
      slots.push(...page.json.slots)
    }
    expect(slots.length).toBe(bundled.size)
    const shift = Date.parse(slots[0]!.start) - bundled.get(slots[0]!.id)!
    expect(shift % WEEK_MS).toBe(0)
    expect(slots.filter((slot) => Date.parse(slot.start) - bundled.get(slot.id)! !== shift)).toEqual([])
    // The earliest slot falls in the week of now: Monday 2026-11-16 up to now's Saturday.
    expect(slots[0]!.start.slice(0, 10) >= '2026-11-16').toBe(true)
    expect(slots[0]!.start <= '2026-11-21T10:00:30.000Z').toBe(true)

    const fromNow = await server.get('/v1/scheduling/slots?limit=1', bearer(server.key))
    expect(fromNow.json.total).toBeGreaterThan(bundled.size / 2)
    expect(fromNow.json.slots[0].start > '2026-11-21T10:00:30.000Z').toBe(true)
  })

  it('says what the publisher still holds when a demo started again within the minute does not sync it', async () => {
    const lines = await schedulingDemo({ db: server.server.db, dataDir: server.dir, now: server.now() })
    expect(lines).toEqual([
      `Scheduling: publisher smart-examples skipped (fetched less than a minute ago; a publisher is fetched at most once a minute), ${bundledStarts().size} slots held.`,
    ])
  })
})
