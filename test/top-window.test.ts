import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../bench/lib/random.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { liveDatabasePath } from '../src/db/live.js'
import { openDatabase } from '../src/app/store.js'
import { type RequestRecord, RequestLog } from '../src/stats/requestLog.js'
import { NOW_MS, WINDOW_MS } from '../src/stats/requestWindow.js'
import { openTopSources } from '../src/stats/topFeed.js'
import { TopReader, type TopSnapshot, type TopSources } from '../src/stats/topSnapshot.js'
import { DEFAULT_NOW } from './support/harness.js'

/**
 * The window's figures are running sums that requests enter when read and leave when the window passes
 * them. Whatever the order rows arrive in and however the clock moves, a reader kept across refreshes must
 * show what a reader opened at that instant shows, and both what the logged requests say.
 */
const PUBLISHERS = '/v1/scheduling/publishers'
const METADATA = '/v1/fhir/r4/metadata'
/** Not on a second: the window's edges fall inside seconds. */
const START = Date.parse(DEFAULT_NOW) + 437

let dir: string
let dbPath: string
let log: RequestLog
let sources: TopSources & { close(): void }
const logged: RequestRecord[] = []
const orgIds: Record<string, number> = {}
let clock = START
let sequence = 0

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-top-window-'))
  dbPath = join(dir, 'svc.db')
  const db = openDatabase(dbPath)
  for (const slug of ['north', 'south', 'east']) orgIds[slug] = createOrganization(db, { slug }, START).id
  db.close()
  log = new RequestLog(liveDatabasePath(dbPath), () => clock)
  const opened = openTopSources(dbPath)
  if (!opened) throw new Error('store missing')
  sources = opened
})

afterAll(async () => {
  await log.stop()
  sources.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Writes requests through the server's own request log writer, in the order given (rowids follow it). */
async function write(requests: Partial<RequestRecord>[]): Promise<void> {
  for (const request of requests) {
    const record: RequestRecord = {
      requestId: `r-${++sequence}`,
      at: clock,
      orgId: null,
      keyId: null,
      method: 'GET',
      path: PUBLISHERS,
      route: PUBLISHERS,
      group: 'scheduling',
      status: 200,
      durationMs: 1,
      bytes: 10,
      ...request,
    }
    logged.push(record)
    log.record(record)
  }
  await log.flush()
}

const fresh = (now: number, filter: string | null = null): TopSnapshot =>
  new TopReader(sources).read(now, filter)

/** The figures the logged requests give for the window ending at `now`. */
function expected(now: number, orgId?: number) {
  const inWindow = logged.filter(
    (request) => request.at > now - WINDOW_MS && (orgId === undefined || request.orgId === orgId),
  )
  const count = (test: (status: number) => boolean) => inWindow.filter((r) => test(r.status)).length
  return {
    requests: inWindow.length,
    perSecond: inWindow.filter((request) => request.at > now - NOW_MS).length / (NOW_MS / 1000),
    byClass: {
      '2xx': count((status) => status < 300),
      '3xx': count((status) => status >= 300 && status < 400),
      '4xx': count((status) => status >= 400 && status < 500 && status !== 429),
      '429': count((status) => status === 429),
      '5xx': count((status) => status >= 500),
    },
  }
}

describe('the request window', () => {
  it('counts a request while it is after the window edge, to the millisecond, and the last 10 s apart', async () => {
    clock = START
    await write([
      { at: START - WINDOW_MS, status: 500 },
      { at: START - WINDOW_MS + 1, status: 404 },
      { at: START - NOW_MS },
      { at: START - NOW_MS + 1 },
      { at: START, status: 429 },
    ])
    const reader = new TopReader(sources)
    const steps: [now: number, requests: number, recent: number][] = [
      [START, 4, 2],
      [START + 1, 3, 1],
      [START + NOW_MS - 1, 3, 1],
      [START + NOW_MS, 3, 0],
      [START + WINDOW_MS - NOW_MS, 2, 0],
      [START + WINDOW_MS - NOW_MS + 1, 1, 0],
      [START + WINDOW_MS - 1, 1, 0],
      [START + WINDOW_MS, 0, 0],
    ]
    for (const [now, requests, recent] of steps) {
      const snapshot = reader.read(now)
      expect([snapshot.traffic.requests, snapshot.traffic.perSecond * (NOW_MS / 1000)]).toEqual([
        requests,
        recent,
      ])
      expect(snapshot).toEqual(fresh(now))
    }
  })

  it('keeps every figure equal to a fresh read as requests arrive late, out of order, and time jumps', async () => {
    const random = seededRandom(6)
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
    // Slices of 7 rowids: every refresh reads several, some cut between a request and its late neighbours.
    const reader = new TopReader(sources, { rowsPerRead: 7 })
    let now = START + 2 * WINDOW_MS
    reader.read(now)
    for (let step = 0; step < 60; step++) {
      // Mostly a second or so; now and then past the whole window, which empties it.
      now += step % 20 === 19 ? WINDOW_MS + 3_000 : 600 + Math.floor(random() * 900)
      clock = now
      const batch = Array.from({ length: 5 + Math.floor(random() * 30) }, () => {
        // A process that flushes late: rows older than the last refresh, some across either edge.
        const late = pick([0, 0, 0, 0, 0, 0, WINDOW_MS, NOW_MS])
        const endpoint = pick([
          { method: 'GET', route: PUBLISHERS, group: 'scheduling', path: PUBLISHERS },
          { method: 'GET', route: METADATA, group: 'fhir', path: METADATA },
          // No endpoint at the path: counted as unmatched.
          { method: 'GET', route: null, group: null, path: '/v1/nope' },
        ])
        return {
          ...endpoint,
          at: now - (late > 0 ? late - 2_000 : 0) - Math.floor(random() * (late > 0 ? 4_000 : 2_500)),
          orgId: pick([orgIds.north, orgIds.south, orgIds.east, null]) ?? null,
          status: pick([200, 200, 200, 304, 404, 429, 503]),
          durationMs: 0.05 + random() * 40,
        }
      })
      await write(batch)
      const snapshot = reader.read(now)
      expect(snapshot).toEqual(fresh(now))
      expect(new TopReader(sources, { rowsPerRead: 5 }).read(now)).toEqual(snapshot)
      expect(snapshot.traffic).toMatchObject(expected(now))
      expect(reader.read(now, 'south')).toEqual(fresh(now, 'south'))
      expect(reader.read(now, 'south').traffic).toMatchObject(expected(now, orgIds.south))
    }
    expect(logged.length).toBeGreaterThan(1000)
  })
})
