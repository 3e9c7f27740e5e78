import type { Context } from 'koa'
import { type Session, setFlash, takeFlash } from '../accounts/sessions.js'
import { writeWhenFree } from '../db/busy.js'
import { listOrganizations } from '../accounts/orgs.js'
import { listPlans } from '../accounts/plans.js'
import { readLiveMinute } from '../stats/liveMinute.js'
import { type PublisherStatus, readPublisherStatus } from '../stats/publisherStatus.js'
import { type OrgQuota, readQuota } from '../stats/quota.js'
import { HourlyTotals } from '../stats/requestSearch.js'
import { UserError } from '../userError.js'
import type { DashboardDeps } from './operations.js'
import type { Chrome } from './pages/layout.js'
import type { LiveFigures } from './pages/overview.js'
import { seeOther } from './respond.js'

/** What a one-time message across a redirect holds (sealed in the session row: src/accounts/sessions.ts). */
export interface Flash {
  notice?: string
  error?: string
  created?: { id: string; key: string }
  /** Where to go instead of the action's usual page (a new organization's own). */
  next?: string
}

/** A request of a signed-in operator. */
export interface Signed {
  token: string
  session: Session
  email: string
}

export interface Route {
  method: 'GET' | 'POST'
  pattern: RegExp
  handle: (ctx: Context, match: RegExpExecArray, signed: Signed) => Promise<void> | void
}

/** A path segment of a route's pattern, as the operation names it. */
export const segment = (match: RegExpExecArray, index = 1) => decodeURIComponent(match[index] as string)

/** The form a POST carried (read once, before the session and CSRF checks). */
export const formOf = (ctx: Context) => ctx.state.form as URLSearchParams

/**
 * What every page of the dashboard shares, made once per app: the dependencies, the hourly totals kept for
 * the charts, the live figures, and the helpers that read a session's flash, build a page's chrome and run
 * an operation. Nothing here reads the request log row by row: the live figures are what each serving
 * process reports of its last minute (src/stats/liveMinute.ts), so an open dashboard costs the API a few
 * row reads a refresh, whatever the traffic.
 */
export class Kit {
  readonly hourly: HourlyTotals

  constructor(readonly deps: DashboardDeps) {
    this.hourly = new HourlyTotals(deps.live)
  }

  /** The last minute of every serving process, together: what `svc top` shows, as each process counts it. */
  liveFigures(): LiveFigures {
    const minute = readLiveMinute(this.deps.live, this.deps.clock())
    return {
      requestsPerMinute: minute.requests,
      p50Ms: minute.latency?.p50Ms ?? null,
      p99Ms: minute.latency?.p99Ms ?? null,
      errorRate: minute.requests === 0 ? 0 : minute.failed / minute.requests,
    }
  }

  /** Every organization's use of its plan now (this minute's and month's counters). */
  quota(): OrgQuota[] {
    const { db, live, clock } = this.deps
    const accounts = { orgs: listOrganizations(db), plans: listPlans(db) }
    return readQuota(live, accounts, clock(), () => 0).map(({ orgId: _, ...row }) => row)
  }

  publishers(): PublisherStatus[] {
    return readPublisherStatus(this.deps.db)
  }

  /** The session's flash, taken when the live file's lock is free (its connection does not wait on it). */
  async flashOf(signed: Signed): Promise<Flash> {
    const text = await writeWhenFree(() => takeFlash(this.deps.live, signed.token))
    return text ? (JSON.parse(text) as Flash) : {}
  }

  chromeOf(signed: Signed, current: Chrome['current'], flash: Flash = {}): Chrome {
    return {
      operator: signed.email,
      csrf: signed.session.csrf,
      current,
      notice: flash.notice,
      error: flash.error,
    }
  }

  /** Runs an operation and comes back to `location` saying how it went (a refusal says why). */
  async act(ctx: Context, signed: Signed, location: string, operation: () => Flash): Promise<void> {
    let flash: Flash
    try {
      flash = operation()
    } catch (error) {
      if (!(error instanceof UserError)) throw error
      flash = { error: error.message }
    }
    const { next, ...shown } = flash
    await writeWhenFree(() => setFlash(this.deps.live, signed.token, JSON.stringify(shown)))
    seeOther(ctx, next ?? location)
  }
}
