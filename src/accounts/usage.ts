import type { Clock } from '../clock.js'
import type { Db } from '../db/open.js'
import { LIMITS_IN_FORCE_FROM, type Plan } from './plans.js'

export interface Reservation {
  orgId: number
  minutePeriod: string
  monthPeriod: string
}

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

class Refused extends Error {
  constructor(readonly refusal: Exclude<ReserveResult, { ok: true }>) {
    super('limit reached')
  }
}

/**
 * Counts requests per organization per UTC minute and month in the live database (src/db/live.ts), which
 * every server process shares. Reserve increments and checks in one IMMEDIATE transaction (rolled back when
 * refused), so several processes never overshoot; a request whose answer must not count (5xx) is refunded.
 */
export class UsageCounter {
  readonly #reserve: (orgId: number, plan: Plan, now: number) => ReserveResult
  readonly #refund: (reservation: Reservation) => void

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    const bump = db
      .prepare(
        `INSERT INTO usage_counters (org_id, period, count) VALUES (?, ?, 1)
         ON CONFLICT (org_id, period) DO UPDATE SET count = count + 1 RETURNING count`,
      )
      .pluck()
    const drop = db.prepare(
      'UPDATE usage_counters SET count = count - 1 WHERE org_id = ? AND period = ? AND count > 0',
    )
    // Count first and undo by rolling back when a limit refuses: the common (allowed) path is two statements.
    const reserve = db.transaction((orgId: number, plan: Plan, now: number): ReserveResult => {
      const minute = minutePeriod(now)
      const month = monthPeriod(now)
      const counts = {
        minute: (bump.get(orgId, minute) as number) - 1,
        month: (bump.get(orgId, month) as number) - 1,
      }
      const refusal = limitReached(plan, counts, now)
      if (refusal) throw new Refused(refusal)
      return { ok: true, reservation: { orgId, minutePeriod: minute, monthPeriod: month } }
    })
    const refund = db.transaction((reservation: Reservation) => {
      drop.run(reservation.orgId, reservation.minutePeriod)
      drop.run(reservation.orgId, reservation.monthPeriod)
    })
    this.#reserve = (orgId, plan, now) => {
      try {
        return reserve.immediate(orgId, plan, now)
      } catch (error) {
        if (error instanceof Refused) return error.refusal
        throw error
      }
    }
    this.#refund = (reservation) => refund.immediate(reservation)
  }

  reserve(orgId: number, plan: Plan): ReserveResult {
    return this.#reserve(orgId, plan, this.clock())
  }

  refund(reservation: Reservation): void {
    this.#refund(reservation)
  }
}

/** Minute counters are only needed for the current minute; the month ones are kept for reporting. */
export function pruneMinuteCounters(db: Db, now: number): number {
  const keepFrom = Math.floor(now / 60_000) - 60
  return db
    .prepare("DELETE FROM usage_counters WHERE period GLOB 'm:*' AND CAST(substr(period, 3) AS INTEGER) < ?")
    .run(keepFrom).changes
}
