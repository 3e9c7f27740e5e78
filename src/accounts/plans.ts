import type { Db } from '../db/open.js'

export interface Plan {
  id: string
  name: string
  monthlyLimit: number
  minuteLimit: number
  blocksPastMonth: boolean
}

/** Plan limits are in force from this instant; before it nothing is refused (usage is still counted). */
export const LIMITS_IN_FORCE_FROM = Date.parse('2026-11-01T00:00:00Z')

export function listPlans(db: Db): Plan[] {
  return db
    .prepare(
      `SELECT id, name, monthly_limit AS monthlyLimit, minute_limit AS minuteLimit,
              blocks_past_month AS blocksPastMonth FROM plans ORDER BY monthly_limit`,
    )
    .all()
    .map((row) => {
      const plan = row as Omit<Plan, 'blocksPastMonth'> & { blocksPastMonth: number }
      return { ...plan, blocksPastMonth: plan.blocksPastMonth === 1 }
    })
}

export function planIds(db: Db): string[] {
  return listPlans(db).map((plan) => plan.id)
}
