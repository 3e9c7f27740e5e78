import type { Context } from 'koa'
import { type Session, setFlash, takeFlash } from '../accounts/sessions.js'
import { writeWhenFree } from '../db/busy.js'
import { HourlyTotals } from '../stats/requestSearch.js'
import { TopReader } from '../stats/topSnapshot.js'
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
 * What every page of the dashboard shares, made once per app: the dependencies, one TopReader over the
 * server's own connections (what `svc top` shows), the hourly totals kept for the charts, and the helpers
 * that read a session's flash, build a page's chrome and run an operation.
 */
export class Kit {
  readonly top: TopReader
  readonly hourly: HourlyTotals
  #live: { at: number; figures: LiveFigures } | undefined

  constructor(readonly deps: DashboardDeps) {
    this.top = new TopReader({ main: deps.db, live: deps.live })
    this.hourly = new HourlyTotals(deps.live)
  }

  /** What svc top shows now, read at most once a second whatever the number of open dashboards. */
  liveFigures(): LiveFigures {
    const now = this.deps.clock()
    if (this.#live && now - this.#live.at < 1000) return this.#live.figures
    const snapshot = this.top.read(now)
    const { requests, byClass } = snapshot.traffic
    const figures = {
      requestsPerMinute: requests,
      p50Ms: snapshot.latency.overall?.p50Ms ?? null,
      p99Ms: snapshot.latency.overall?.p99Ms ?? null,
      errorRate: requests === 0 ? 0 : byClass['5xx'] / requests,
    }
    this.#live = { at: now, figures }
    return figures
  }

  flashOf(signed: Signed): Flash {
    const text = takeFlash(this.deps.live, signed.token)
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
