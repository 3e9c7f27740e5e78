import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import { isBusy, whenFree } from '../db/busy.js'
import type { Db } from '../db/open.js'
import { LIMITS_IN_FORCE_FROM, type Plan } from './plans.js'

export type LimitScope = 'minute' | 'month'

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; scope: LimitScope; retryAfterSeconds: number; limit: number }

export const minutePeriod = (now: number) => `m:${Math.floor(now / 60_000)}`
export const monthPeriod = (now: number) => `M:${new Date(now).toISOString().slice(0, 7)}`

export function startOfNextMonth(now: number): number {
  const date = new Date(now)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}

export function secondsToNextMinute(now: number): number {
  return Math.ceil((60_000 - (now % 60_000)) / 1000)
}

export function secondsToNextMonth(now: number): number {
  return Math.ceil((startOfNextMonth(now) - now) / 1000)
}

/** Which limit, if any, refuses one more request given the counts already made. */
export function limitReached(
  plan: Plan,
  counts: { minute: number; month: number },
  now: number,
): Exclude<ReserveResult, { ok: true }> | undefined {
  if (now < LIMITS_IN_FORCE_FROM) return undefined
  if (plan.blocksPastMonth && counts.month >= plan.monthlyLimit) {
    return { ok: false, scope: 'month', retryAfterSeconds: secondsToNextMonth(now), limit: plan.monthlyLimit }
  }
  if (counts.minute >= plan.minuteLimit) {
    return {
      ok: false,
      scope: 'minute',
      retryAfterSeconds: secondsToNextMinute(now),
      limit: plan.minuteLimit,
    }
  }
  return undefined
}

/** Most units one lease takes: bounds what a process holds unused, and what a crash strands. */
export const MAX_LEASE = 256
/** A lease takes at most this fraction of the allowance left: leases shrink as the limit nears. */
export const LEASE_SHARE = 16

/**
 * Units leased at once when `remaining` units of the tightest limit are neither counted nor leased. At 1
 * the request is counted directly instead, as exact as a single process: below LEASE_SHARE × 2 units left.
 */
export function leaseSize(remaining: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(remaining / LEASE_SHARE)))
}

/** Allowance this process took from the shared counters and hands out from memory, one unit a request. */
interface Lease {
  orgId: number
  planId: string
  minute: number
  minutePeriod: string
  monthPeriod: string
  granted: number
  used: number
  /** Settled: `used` went into usage_counters and the lease rows were deleted; refunds go to the counters. */
  settled: boolean
  /** What every request served from the lease is told: the same for each, so made once instead of per request. */
  admitted: { ok: true; reservation: Reservation }
}

export interface Reservation {
  orgId: number
  minutePeriod: string
  monthPeriod: string
  /** The lease the unit came from, or none when the request was counted directly. */
  lease?: Lease
}

/**
 * Counts requests per organization per UTC minute and month in the live database (src/db/live.ts), which
 * every server process shares, without a write per request:
 *
 * - A process leases a block of units from the shared counters (usage_leases, one row per period and
 *   process) in an IMMEDIATE transaction, then answers from memory until the block is used up, the minute
 *   ends or the plan changes. A period's allowance in use is its usage_counters.count (requests counted)
 *   plus every lease on it, and a lease is only granted out of what remains: the processes together never
 *   overshoot a limit.
 * - Leases shrink as the allowance falls (leaseSize), down to counting each request directly in the last
 *   LEASE_SHARE × 2 units, so near a limit the counters are exact at every request.
 * - Settling writes a lease's used units into usage_counters and returns the rest. Each process settles
 *   when it takes its next lease, every `settleEveryMs` (1 s) and when it stops. A request is refused only
 *   when every unit is counted or leased; units another process leased and has not used are back within
 *   that second, and are at most 1/LEASE_SHARE of what remained when leased.
 * - A 5xx is refunded: to its lease while unsettled, to the counters after.
 * - A process that dies without settling leaves its lease rows: their units stay taken (no overshoot), its
 *   unsettled requests are never added to the counters, and the rows go with the period.
 */
export class UsageCounter {
  readonly #holder = randomUUID()
  readonly #leases = new Map<number, Lease>()
  readonly #acquire: (orgId: number, plan: Plan, now: number) => ReserveResult
  readonly #settleAll: () => void
  readonly #refundCounted: (reservation: Reservation) => void
  /** Per organization, a lease being taken while the live file is locked: later requests wait for it. */
  readonly #waiting = new Map<number, Promise<ReserveResult>>()
  #timer: NodeJS.Timeout | undefined

  /**
   * `live` should have busy_timeout 0: when another connection (a writer thread, another process) holds the
   * live file's lock, the counter waits for it asynchronously, up to `busyTimeoutMs`, instead of sleeping
   * in SQLite's busy handler with the event loop stopped.
   */
  constructor(
    live: Db,
    private readonly clock: Clock,
    private readonly options: { settleEveryMs?: number; busyTimeoutMs?: number } = {},
  ) {
    const taken = live
      .prepare(
        `SELECT coalesce((SELECT count FROM usage_counters WHERE org_id = ? AND period = ?), 0)
              + coalesce((SELECT sum(units) FROM usage_leases WHERE org_id = ? AND period = ?), 0)`,
      )
      .pluck()
    const addCount = live.prepare(
      `INSERT INTO usage_counters (org_id, period, count) VALUES (?, ?, ?)
       ON CONFLICT (org_id, period) DO UPDATE SET count = count + excluded.count`,
    )
    const addLease = live.prepare(
      'INSERT INTO usage_leases (org_id, period, holder, units) VALUES (?, ?, ?, ?)',
    )
    const dropLease = live.prepare('DELETE FROM usage_leases WHERE org_id = ? AND period = ? AND holder = ?')
    const uncount = live.prepare(
      'UPDATE usage_counters SET count = count - 1 WHERE org_id = ? AND period = ? AND count > 0',
    )

    const writeSettlement = (lease: Lease) => {
      for (const period of [lease.minutePeriod, lease.monthPeriod]) {
        dropLease.run(lease.orgId, period, this.#holder)
        if (lease.used > 0) addCount.run(lease.orgId, period, lease.used)
      }
    }
    // Memory follows the file only once its transaction has committed: a transaction that fails (a full
    // disk) leaves the lease rows in place, and a lease forgotten here would be leased again over its row.
    const settled = (lease: Lease) => {
      lease.settled = true
      if (this.#leases.get(lease.orgId) === lease) this.#leases.delete(lease.orgId)
    }

    const acquire = live.transaction(
      (orgId: number, plan: Plan, now: number, previous?: Lease): ReserveResult => {
        if (previous) writeSettlement(previous)
        const minute = minutePeriod(now)
        const month = monthPeriod(now)
        let units = MAX_LEASE
        if (now >= LIMITS_IN_FORCE_FROM) {
          const counts = {
            minute: taken.get(orgId, minute, orgId, minute) as number,
            month: taken.get(orgId, month, orgId, month) as number,
          }
          const refusal = limitReached(plan, counts, now)
          if (refusal) return refusal
          const monthLeft = plan.blocksPastMonth ? plan.monthlyLimit - counts.month : Number.POSITIVE_INFINITY
          units = leaseSize(Math.min(plan.minuteLimit - counts.minute, monthLeft))
        }
        if (units === 1) {
          addCount.run(orgId, minute, 1)
          addCount.run(orgId, month, 1)
          return { ok: true, reservation: { orgId, minutePeriod: minute, monthPeriod: month } }
        }
        addLease.run(orgId, minute, this.#holder, units)
        addLease.run(orgId, month, this.#holder, units)
        const reservation: Reservation = { orgId, minutePeriod: minute, monthPeriod: month }
        const lease: Lease = {
          orgId,
          planId: plan.id,
          minute: Math.floor(now / 60_000),
          minutePeriod: minute,
          monthPeriod: month,
          granted: units,
          used: 1,
          settled: false,
          admitted: { ok: true, reservation },
        }
        reservation.lease = lease
        return lease.admitted
      },
    ).immediate
    this.#acquire = (orgId, plan, now) => {
      const previous = this.#leases.get(orgId)
      const result = acquire(orgId, plan, now, previous)
      if (previous) settled(previous)
      if (result.ok && result.reservation.lease) this.#leases.set(orgId, result.reservation.lease)
      return result
    }

    const settleAll = live.transaction((leases: Lease[]) => {
      for (const lease of leases) writeSettlement(lease)
    }).immediate
    this.#settleAll = () => {
      const leases = [...this.#leases.values()]
      settleAll(leases)
      for (const lease of leases) settled(lease)
    }

    this.#refundCounted = live.transaction((reservation: Reservation) => {
      uncount.run(reservation.orgId, reservation.minutePeriod)
      uncount.run(reservation.orgId, reservation.monthPeriod)
    }).immediate
  }

  /**
   * Takes one unit of the organization's allowance for a request now, or says which limit refuses it. A
   * promise only when a lease must be taken while the live file is locked; rejects with SQLITE_BUSY when
   * it stays locked past `busyTimeoutMs`.
   */
  reserve(orgId: number, plan: Plan): ReserveResult | Promise<ReserveResult> {
    const now = this.clock()
    const lease = this.#leases.get(orgId)
    if (
      lease !== undefined &&
      lease.used < lease.granted &&
      lease.minute === Math.floor(now / 60_000) &&
      lease.planId === plan.id
    ) {
      lease.used++
      return lease.admitted
    }
    const waiting = this.#waiting.get(orgId)
    if (waiting) return waiting.then(() => this.reserve(orgId, plan))
    try {
      return this.#acquire(orgId, plan, now)
    } catch (error) {
      if (!isBusy(error)) throw error
    }
    const acquired = this.#whenFree(() => this.#acquire(orgId, plan, this.clock())).finally(() =>
      this.#waiting.delete(orgId),
    )
    this.#waiting.set(orgId, acquired)
    return acquired
  }

  /** Gives back the unit of a request whose answer must not count. */
  refund(reservation: Reservation): void {
    const lease = reservation.lease
    if (lease && !lease.settled) {
      lease.used--
      return
    }
    try {
      this.#refundCounted(reservation)
    } catch (error) {
      if (!isBusy(error)) throw error
      // Left counted if the file stays locked: that errs against the caller, by one request.
      this.#whenFree(() => this.#refundCounted(reservation)).catch(() => undefined)
    }
  }

  #whenFree<T>(write: () => T): Promise<T> {
    return whenFree(write, this.options.busyTimeoutMs ?? 5000)
  }

  /** Writes every lease's used units into the counters and returns the unused ones. */
  settle(): void {
    if (this.#leases.size > 0) this.#settleAll()
  }

  start(): void {
    this.#timer ??= setInterval(() => {
      try {
        this.settle()
      } catch {
        // The live file is locked or failing: the leases stay, and the next tick tries again.
      }
    }, this.options.settleEveryMs ?? 1000)
    this.#timer.unref()
  }

  /** Stops the timer and settles every lease, waiting for the live file's lock if need be. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    try {
      this.settle()
    } catch (error) {
      if (!isBusy(error)) throw error
      await this.#whenFree(() => this.settle())
    }
  }
}

/**
 * Housekeeping on the live database, as [sql, params] for a writer thread (src/db/writerThread.ts): minute
 * counters are only needed for the current minute (an hour is kept for `svc top`), month ones are kept for
 * reporting; lease rows outlive their period only when their process died.
 */
export function usagePruneStatements(now: number): [sql: string, params: unknown[]][] {
  const keepFrom = Math.floor(now / 60_000) - 60
  return [
    [
      "DELETE FROM usage_counters WHERE period GLOB 'm:*' AND CAST(substr(period, 3) AS INTEGER) < ?",
      [keepFrom],
    ],
    [
      `DELETE FROM usage_leases WHERE (period GLOB 'm:*' AND CAST(substr(period, 3) AS INTEGER) < ?)
          OR (period GLOB 'M:*' AND period < ?)`,
      [keepFrom, monthPeriod(now)],
    ],
  ]
}
