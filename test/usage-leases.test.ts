import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOrganization } from '../src/accounts/orgs.js'
import type { Plan } from '../src/accounts/plans.js'
import { leaseSize, MAX_LEASE, type ReserveResult, UsageCounter } from '../src/accounts/usage.js'
import { openLiveStore } from '../src/app/store.js'
import type { Store } from '../src/db/open.js'
import { openStore } from '../src/app/store.js'

/**
 * Two UsageCounters on one live file, each with its own connection and holder id, stand for two server
 * processes: SQLite locks two connections of one process exactly as it locks two processes.
 */
const DEVELOPER: Plan = {
  id: 'developer',
  name: 'Developer',
  monthlyLimit: 1000,
  minuteLimit: 60,
  blocksPastMonth: true,
}
const TEAM: Plan = {
  id: 'team',
  name: 'Team',
  monthlyLimit: 50_000,
  minuteLimit: 600,
  blocksPastMonth: false,
}

let dir: string
let store: Store
let orgId: number
let now: number
const opened: { close(): void }[] = []
const clock = () => now

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-leases-'))
  store = openStore({ db: join(dir, 'svc.db') })
  orgId = createOrganization(store.db, { slug: 'acme' }).id
  now = Date.parse('2026-11-21T10:00:30Z')
})

afterEach(() => {
  for (const connection of opened.splice(0)) connection.close()
  store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A counter on its own connection to the live file, as another process would have. */
function processCounter(): UsageCounter {
  const live = openLiveStore({ db: join(dir, 'svc.db') })
  opened.push(live)
  return new UsageCounter(live, clock)
}

const minute = () => `m:${Math.floor(now / 60_000)}`
const counted = (period: string) =>
  (store.live
    .prepare('SELECT count FROM usage_counters WHERE org_id = ? AND period = ?')
    .pluck()
    .get(orgId, period) as number | undefined) ?? 0
const leased = (period: string) =>
  store.live
    .prepare('SELECT coalesce(sum(units), 0) FROM usage_leases WHERE org_id = ? AND period = ?')
    .pluck()
    .get(orgId, period) as number

/** A reserve on a connection with a busy timeout, as these counters have: never a promise. */
function reserve(counter: UsageCounter, plan = DEVELOPER): ReserveResult {
  const result = counter.reserve(orgId, plan)
  if (result instanceof Promise) throw new Error('the reserve waited for the live file')
  return result
}

function reserveMany(counter: UsageCounter, times: number, plan = DEVELOPER): ReserveResult[] {
  return Array.from({ length: times }, () => reserve(counter, plan))
}
const okCount = (results: ReserveResult[]) => results.filter((result) => result.ok).length

describe('lease size', () => {
  it('shrinks with the allowance left, to counting each request directly below 2 × LEASE_SHARE', () => {
    expect(leaseSize(1_000_000)).toBe(MAX_LEASE)
    expect(leaseSize(600)).toBe(37)
    expect(leaseSize(60)).toBe(3)
    expect(leaseSize(32)).toBe(2)
    expect(leaseSize(31)).toBe(1)
    expect(leaseSize(1)).toBe(1)
  })
})

describe('two processes sharing the counters', () => {
  it('never overshoot near a limit, and refuse only when every unit is counted or leased', () => {
    const a = processCounter()
    const b = processCounter()
    let seed = 7
    const coin = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % 3 === 0
    }
    let allowed = 0
    for (let i = 0; i < 200; i++) {
      const result = reserve(coin() ? a : b)
      if (result.ok) allowed++
      else {
        expect(result.scope).toBe('minute')
        expect(counted(minute()) + leased(minute())).toBeGreaterThanOrEqual(60)
      }
    }
    expect(allowed).toBe(60)
    a.settle()
    b.settle()
    expect(counted(minute())).toBe(60)
    expect(counted('M:2026-11')).toBe(60)
    expect(leased(minute()) + leased('M:2026-11')).toBe(0)
  })

  it('give another process the units one leased and did not use once it settles or stops', async () => {
    const a = processCounter()
    const b = processCounter()
    expect(reserve(a).ok).toBe(true) // leases 3, uses 1
    expect(leased(minute())).toBe(3)
    const first = reserveMany(b, 60)
    expect(okCount(first)).toBe(57)
    expect(first.at(-1)).toMatchObject({ ok: false, scope: 'minute', retryAfterSeconds: 30 })
    await a.stop()
    const second = reserveMany(b, 5)
    expect(okCount(second)).toBe(2)
    b.settle()
    expect(counted(minute())).toBe(60)
  })

  it('keep the units of a process that died without settling taken, so nothing overshoots', () => {
    const a = processCounter()
    const b = processCounter()
    reserveMany(a, 2) // a lease of 3, one unused, and the process is gone
    expect(okCount(reserveMany(b, 60))).toBe(57)
    b.settle()
    expect(counted(minute()) + leased(minute())).toBe(60)
    // Its requests were never settled: the counters hold only what live processes counted.
    expect(counted(minute())).toBe(57)
    now += 60_000
    expect(okCount(reserveMany(b, 60))).toBe(60)
  })

  it('count directly near the monthly allowance, and refuse past it until the 1st', () => {
    const a = processCounter()
    store.live.prepare("INSERT INTO usage_counters VALUES (?, 'M:2026-11', 990)").run(orgId)
    const results = reserveMany(a, 11)
    expect(okCount(results)).toBe(10)
    expect(results.at(-1)).toMatchObject({ ok: false, scope: 'month' })
    expect(leased('M:2026-11')).toBe(0)
    expect(counted('M:2026-11')).toBe(1000)
  })
})

describe('a locked live file', () => {
  /** A counter as the server has it: busy_timeout 0, waiting for the lock itself. */
  function serverCounter(busyTimeoutMs = 2000): UsageCounter {
    const live = openLiveStore({ db: join(dir, 'svc.db') })
    live.pragma('busy_timeout = 0')
    opened.push(live)
    return new UsageCounter(live, clock, { busyTimeoutMs })
  }

  it('makes a lease wait without holding the event loop, one wait per organization', async () => {
    const a = serverCounter()
    const other = openLiveStore({ db: join(dir, 'svc.db') })
    opened.push(other)
    other.exec('BEGIN IMMEDIATE')
    const first = a.reserve(orgId, DEVELOPER)
    const second = a.reserve(orgId, DEVELOPER)
    expect(first).toBeInstanceOf(Promise)
    expect(second).toBeInstanceOf(Promise)
    other.exec('ROLLBACK')
    expect(await first).toMatchObject({ ok: true })
    expect(await second).toMatchObject({ ok: true })
    // One lease served both.
    expect(leased(minute())).toBe(3)
  })

  it('gives up with SQLITE_BUSY once the lock is held past busyTimeoutMs', async () => {
    const a = serverCounter(30)
    const other = openLiveStore({ db: join(dir, 'svc.db') })
    opened.push(other)
    other.exec('BEGIN IMMEDIATE')
    try {
      await expect(a.reserve(orgId, DEVELOPER)).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
    } finally {
      other.exec('ROLLBACK')
    }
    expect(await a.reserve(orgId, DEVELOPER)).toMatchObject({ ok: true })
  })
})

describe('a lease', () => {
  it('ends with its minute: used units count in their own minute', () => {
    const a = processCounter()
    const first = minute()
    expect(okCount(reserveMany(a, 5))).toBe(5)
    now = Date.parse('2026-11-21T10:01:00Z')
    expect(reserve(a).ok).toBe(true)
    expect(counted(first)).toBe(5)
    expect(leased(first)).toBe(0)
    a.settle()
    expect(counted(minute())).toBe(1)
    expect(counted('M:2026-11')).toBe(6)
  })

  it('is kept when the next lease cannot be written (a full disk), and settled once it can', () => {
    const live = openLiveStore({ db: join(dir, 'svc.db') })
    opened.push(live)
    const a = new UsageCounter(live, clock)
    const first = minute()
    expect(okCount(reserveMany(a, 5))).toBe(5)
    now = Date.parse('2026-11-21T10:01:00Z')
    // The next lease cannot be written, as on a full disk: the transaction that settles the last one and
    // takes the next is rolled back whole.
    live.exec(`CREATE TEMP TRIGGER no_room BEFORE INSERT ON usage_leases
               BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
    expect(() => reserve(a)).toThrow(/disk is full/)
    expect(leased('M:2026-11')).toBeGreaterThan(0)
    live.exec('DROP TRIGGER no_room')
    // The lease the file still holds is settled, not leased again over its row.
    expect(reserve(a).ok).toBe(true)
    a.settle()
    expect(counted(first)).toBe(5)
    expect(counted(minute())).toBe(1)
    expect(counted('M:2026-11')).toBe(6)
    expect(leased('M:2026-11')).toBe(0)
  })

  it('takes refunds while unsettled, and the counters take them after', () => {
    const a = processCounter()
    const results = reserveMany(a, 3)
    for (const result of results.slice(0, 2)) if (result.ok) a.refund(result.reservation)
    a.settle()
    expect(counted(minute())).toBe(1)
    const late = reserve(a)
    a.settle()
    expect(counted(minute())).toBe(2)
    if (late.ok) a.refund(late.reservation)
    expect(counted(minute())).toBe(1)
    expect(counted('M:2026-11')).toBe(1)
  })

  it('is given up when the plan changes, so a downgrade does not overshoot the new plan', () => {
    const a = processCounter()
    store.live.prepare('INSERT INTO usage_counters VALUES (?, ?, 50)').run(orgId, minute())
    expect(reserve(a, TEAM).ok).toBe(true) // a lease of (600 - 50) / 16 = 34 units
    expect(leased(minute())).toBe(34)
    expect(okCount(reserveMany(a, 20, DEVELOPER))).toBe(9)
    a.settle()
    expect(counted(minute())).toBe(60)
  })

  it('is not limited before 2026-11-01, when every request still counts', () => {
    now = Date.parse('2026-10-31T23:59:10Z')
    const a = processCounter()
    expect(okCount(reserveMany(a, 700))).toBe(700)
    expect(leased(minute())).toBe(MAX_LEASE)
    a.settle()
    expect(counted(minute())).toBe(700)
    expect(counted('M:2026-10')).toBe(700)
    now = Date.parse('2026-11-01T00:00:00Z')
    expect(okCount(reserveMany(a, 61))).toBe(60)
  })
})
