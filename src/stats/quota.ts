import type { Organization } from '../accounts/orgs.js'
import type { Plan } from '../accounts/plans.js'
import { limitReached, minutePeriod, monthPeriod, startOfNextMonth } from '../accounts/usage.js'
import type { Db } from '../db/open.js'

export interface OrgQuota {
  org: string
  name: string
  plan: string
  minute: { used: number; limit: number }
  month: { used: number; limit: number }
  /** 429s given in the window. */
  rejected: number
  /** The limit that refuses this organization's next request, if one does. */
  limited: 'minute' | 'month' | null
  /** When a monthly block ends (00:00 UTC on the 1st of next month); null unless limited by the month. */
  resetsAt: string | null
}

/** This minute's and month's counters of the given organizations, each found by primary key. */
export const QUOTA_SQL = `SELECT org_id AS orgId, period, count FROM usage_counters
  WHERE org_id IN (SELECT value FROM json_each(?)) AND period IN (?, ?)`

/**
 * Every organization's use of its plan now: organizations and plans as read from the main database, this
 * minute's and month's counters from the live one (where the server counts them), 429s from the request window.
 */
export function readQuota(
  live: Db,
  accounts: { orgs: readonly Organization[]; plans: readonly Plan[] },
  now: number,
  rejectedByOrg: (orgId: number) => number,
): (OrgQuota & { orgId: number })[] {
  const plans = new Map(accounts.plans.map((plan) => [plan.id, plan]))
  const minute = minutePeriod(now)
  const month = monthPeriod(now)
  const counts = new Map<string, number>()
  const orgIds = JSON.stringify(accounts.orgs.map((org) => org.id))
  const rows = live.statement(QUOTA_SQL).all(orgIds, minute, month) as {
    orgId: number
    period: string
    count: number
  }[]
  for (const row of rows) counts.set(`${row.orgId} ${row.period}`, row.count)
  return accounts.orgs.flatMap((org) => {
    const plan = plans.get(org.plan)
    if (!plan) return []
    const used = {
      minute: counts.get(`${org.id} ${minute}`) ?? 0,
      month: counts.get(`${org.id} ${month}`) ?? 0,
    }
    const refusal = limitReached(plan, used, now)
    return [
      {
        orgId: org.id,
        org: org.slug,
        name: org.name,
        plan: plan.name,
        minute: { used: used.minute, limit: plan.minuteLimit },
        month: { used: used.month, limit: plan.monthlyLimit },
        rejected: rejectedByOrg(org.id),
        limited: refusal?.scope ?? null,
        resetsAt: refusal?.scope === 'month' ? new Date(startOfNextMonth(now)).toISOString() : null,
      },
    ]
  })
}
