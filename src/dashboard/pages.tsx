import type { Context } from 'koa'
import type { ReactElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { createKey, keyOrgId, listKeys, revokeKey } from '../accounts/keys.js'
import { operatorById, operatorCredentials, hasOperators } from '../accounts/operators.js'
import {
  createOrganization,
  listOrganizations,
  requireOrganization,
  setOrganizationPlan,
} from '../accounts/orgs.js'
import { verifyPassword } from '../accounts/passwords.js'
import { listPlans } from '../accounts/plans.js'
import {
  endSession,
  pruneSessions,
  readSession,
  type Session,
  setFlash,
  startSession,
  takeFlash,
} from '../accounts/sessions.js'
import {
  clearAccountFailures,
  recordSignInFailure,
  signInRetryAfter,
  signInScopes,
} from '../accounts/signInThrottle.js'
import { writeWhenFree } from '../db/busy.js'
import { findRequest } from '../stats/requestLog.js'
import {
  bucketed,
  HourlyTotals,
  hourOf,
  requestsByHour,
  searchRequests,
  statusBounds,
} from '../stats/requestSearch.js'
import { TopReader } from '../stats/topSnapshot.js'
import { UserError } from '../userError.js'
import { readForm } from './forms.js'
import type { DashboardDeps } from './operations.js'
import { DataPage } from './pages/data.js'
import type { Chrome } from './pages/layout.js'
import { type LiveFigures, OverviewPage } from './pages/overview.js'
import { OrganizationPage, OrganizationsPage, RevokeConfirmPage } from './pages/organizations.js'
import { type RequestQuery, RequestPage, RequestsPage } from './pages/requests.js'
import { RefusedPage, SignInPage } from './pages/signIn.js'
import { clearedCookie, sameOrigin, sessionCookie, sessionToken } from './session.js'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/** What a one-time message across a redirect holds (sealed in the session row: src/accounts/sessions.ts). */
interface Flash {
  notice?: string
  error?: string
  created?: { id: string; key: string }
  /** Where to go instead of the action's usual page (a new organization's own). */
  next?: string
}

interface Signed {
  token: string
  session: Session
  email: string
}

type Handler = (ctx: Context, match: RegExpExecArray, signed: Signed) => Promise<void> | void

interface Route {
  method: 'GET' | 'POST'
  pattern: RegExp
  handle: Handler
}

function send(ctx: Context, element: ReactElement, status = 200): void {
  ctx.status = status
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = `<!doctype html>\n${renderToStaticMarkup(element)}`
}

function seeOther(ctx: Context, location: string): void {
  ctx.set('Location', location)
  // The body before the status: Koa turns an empty body's status into 204.
  ctx.body = `See ${location}`
  ctx.status = 303
}

const slugOf = (match: RegExpExecArray, index = 1) => decodeURIComponent(match[index] as string)

/** The dashboard's pages and actions, for one app: one TopReader over the server's own connections. */
export function dashboardPages(deps: DashboardDeps) {
  const { db, live, config, clock } = deps
  const top = new TopReader({ main: db, live })
  const hourly = new HourlyTotals(live)
  let liveCache: { at: number; figures: LiveFigures } | undefined
  // Secure whenever callers reach the server over https (its base URL), as a proxy in front would serve it.
  const secure = config.baseUrl.startsWith('https:') || config.dashboardUrl.startsWith('https:')

  /** What svc top shows now, read at most once a second whatever the number of open dashboards. */
  const liveFigures = (): LiveFigures => {
    const now = clock()
    if (liveCache && now - liveCache.at < 1000) return liveCache.figures
    const snapshot = top.read(now)
    const { requests, byClass } = snapshot.traffic
    const figures = {
      requestsPerMinute: requests,
      p50Ms: snapshot.latency.overall?.p50Ms ?? null,
      p99Ms: snapshot.latency.overall?.p99Ms ?? null,
      errorRate: requests === 0 ? 0 : byClass['5xx'] / requests,
    }
    liveCache = { at: now, figures }
    return figures
  }

  const flashOf = (signed: Signed): Flash => {
    const text = takeFlash(live, signed.token)
    return text ? (JSON.parse(text) as Flash) : {}
  }
  const chromeOf = (signed: Signed, current: Chrome['current'], flash: Flash = {}): Chrome => ({
    operator: signed.email,
    csrf: signed.session.csrf,
    current,
    notice: flash.notice,
    error: flash.error,
  })
  /** Runs an operation and comes back to `location` saying how it went. */
  const act = async (ctx: Context, signed: Signed, location: string, operation: () => Flash) => {
    let flash: Flash
    try {
      flash = operation()
    } catch (error) {
      if (!(error instanceof UserError)) throw error
      flash = { error: error.message }
    }
    const { next, ...shown } = flash
    await writeWhenFree(() => setFlash(live, signed.token, JSON.stringify(shown)))
    seeOther(ctx, next ?? location)
  }

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/dashboard\/?$/,
      handle: (ctx, _match, signed) => {
        const now = clock()
        const weekAgo = now - 7 * DAY_MS + HOUR_MS
        const monthAgo = now - 30 * DAY_MS + DAY_MS
        const dayStart = Math.floor(monthAgo / DAY_MS) * DAY_MS
        const tallies = hourly.read(dayStart, now)
        send(
          ctx,
          <OverviewPage
            chrome={chromeOf(signed, 'overview', flashOf(signed))}
            live={liveFigures()}
            hours={bucketed(tallies, weekAgo, 7 * 24, 1)}
            days={bucketed(tallies, dayStart, 30, 24)}
            publishers={top.read(now).publishers}
            dataSets={deps.dataSets()}
          />,
        )
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/live\.json$/,
      handle: (ctx) => {
        ctx.type = 'application/json'
        ctx.body = JSON.stringify(liveFigures())
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/organizations$/,
      handle: (ctx, _match, signed) => {
        send(
          ctx,
          <OrganizationsPage
            chrome={chromeOf(signed, 'organizations', flashOf(signed))}
            quota={top.read(clock()).quota.sort((a, b) => a.org.localeCompare(b.org))}
            plans={listPlans(db)}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations$/,
      handle: async (ctx, _match, signed) => {
        const form = ctx.state.form as URLSearchParams
        const slug = (form.get('slug') ?? '').trim()
        // Where the new organization's page will be; a refused slug comes back to the list.
        const created = () => `/dashboard/organizations/${encodeURIComponent(slug)}`
        await act(ctx, signed, '/dashboard/organizations', () => {
          createOrganization(
            db,
            { slug, name: form.get('name')?.trim() || undefined, plan: form.get('plan') || undefined },
            clock(),
          )
          return { notice: `Organization ${slug} created.`, next: created() }
        })
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/organizations\/([^/]+)$/,
      handle: (ctx, match, signed) => {
        const org = requireOrganization(db, slugOf(match))
        const now = clock()
        const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)
        const days = Math.floor((now - monthStart) / DAY_MS) + 1
        const flash = flashOf(signed)
        send(
          ctx,
          <OrganizationPage
            chrome={chromeOf(signed, 'organizations', flash)}
            org={org}
            quota={top.read(now).quota.find((row) => row.org === org.slug)}
            plans={listPlans(db)}
            keys={listKeys({ db, live }, org.slug)}
            created={flash.created}
            days={bucketed(
              requestsByHour(live, hourOf(monthStart), hourOf(now) + 1, org.id),
              monthStart,
              days,
              24,
            )}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/plan$/,
      handle: (ctx, match, signed) => {
        const slug = slugOf(match)
        const plan = (ctx.state.form as URLSearchParams).get('plan') ?? ''
        return act(ctx, signed, `/dashboard/organizations/${encodeURIComponent(slug)}`, () => {
          const org = setOrganizationPlan(db, slug, plan)
          return { notice: `${org.name} is now on the ${plan} plan.` }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/keys$/,
      handle: (ctx, match, signed) => {
        const slug = slugOf(match)
        const name = (ctx.state.form as URLSearchParams).get('name')?.trim() || undefined
        return act(ctx, signed, `/dashboard/organizations/${encodeURIComponent(slug)}`, () => {
          const created = createKey(db, { org: slug, name }, clock())
          return { notice: `Key ${created.id} created.`, created: { id: created.id, key: created.key } }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/keys\/([^/]+)\/revoke$/,
      handle: (ctx, match, signed) => {
        const org = requireOrganization(db, slugOf(match))
        const keyId = slugOf(match, 2)
        const location = `/dashboard/organizations/${encodeURIComponent(org.slug)}`
        const key = listKeys({ db, live }, org.slug).find((record) => record.id === keyId)
        if (!key) return act(ctx, signed, location, () => ({ error: `No key ${keyId} in ${org.slug}` }))
        if ((ctx.state.form as URLSearchParams).get('confirm') !== 'yes') {
          send(ctx, <RevokeConfirmPage chrome={chromeOf(signed, 'organizations')} org={org} apiKey={key} />)
          return
        }
        return act(ctx, signed, location, () => {
          revokeKey({ db, live }, keyId, clock())
          return { notice: `Key ${key.prefix} revoked: every server refuses it from its next request.` }
        })
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests$/,
      handle: (ctx, _match, signed) => {
        const q = ctx.request.query
        const text = (name: string) => (typeof q[name] === 'string' ? (q[name] as string).trim() : '')
        const query: RequestQuery = {
          org: text('org'),
          key: text('key'),
          status: text('status'),
          path: text('path'),
          from: text('from'),
          to: text('to'),
        }
        const orgs = listOrganizations(db)
        const faults: string[] = []
        const org = query.org ? orgs.find((candidate) => candidate.slug === query.org) : undefined
        if (query.org && !org) faults.push(`No organization ${query.org}.`)
        // A key belongs to one organization: its requests are found through the organization's index.
        const keyOrg = query.key ? keyOrgId(db, query.key) : undefined
        if (query.key && keyOrg === undefined) faults.push(`No key ${query.key}.`)
        if (org && keyOrg !== undefined && keyOrg !== org.id)
          faults.push(`Key ${query.key} is not ${org.slug}'s.`)
        if (query.status && !statusBounds(query.status))
          faults.push('Status is a class such as 4xx, or one status such as 429.')
        const time = (value: string, name: string) => {
          if (!value) return undefined
          const ms = Date.parse(/Z$|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`)
          if (Number.isNaN(ms)) faults.push(`${name} is not a date and time.`)
          return Number.isNaN(ms) ? undefined : ms
        }
        const from = time(query.from, 'From')
        const to = time(query.to, 'To')
        const before = /^(\d+)\.(\d+)$/.exec(text('before'))
        const page =
          faults.length > 0
            ? { rows: [], next: undefined, walkedLimit: false }
            : searchRequests(
                live,
                {
                  orgId: org?.id ?? keyOrg,
                  keyId: query.key || undefined,
                  status: query.status || undefined,
                  pathPrefix: query.path || undefined,
                  from,
                  to,
                },
                before ? { at: Number(before[1]), rowid: Number(before[2]) } : undefined,
              )
        const slugs = new Map(orgs.map((candidate) => [candidate.id, candidate.slug]))
        const older = page.next
          ? `/dashboard/requests?${new URLSearchParams({ ...query, before: `${page.next.at}.${page.next.rowid}` })}`
          : undefined
        const chrome = chromeOf(signed, 'requests')
        send(
          ctx,
          <RequestsPage
            chrome={{ ...chrome, error: faults.join(' ') || undefined }}
            query={query}
            orgs={orgs}
            rows={page.rows.map((row) => ({
              ...row,
              org: row.orgId === null ? null : (slugs.get(row.orgId) ?? null),
            }))}
            older={older}
            walkedTo={page.walkedLimit && page.next ? page.next.at : undefined}
          />,
          faults.length > 0 ? 400 : 200,
        )
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests\/find$/,
      handle: (ctx) => {
        const id = typeof ctx.request.query.id === 'string' ? ctx.request.query.id.trim() : ''
        seeOther(ctx, `/dashboard/requests/${encodeURIComponent(id)}`)
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests\/([^/]+)$/,
      handle: (ctx, match, signed) => {
        const id = slugOf(match)
        const request = findRequest({ db, live }, id)
        if (!request) {
          send(
            ctx,
            <RefusedPage
              chrome={{ ...chromeOf(signed, 'requests') }}
              reason={`No request ${id} in the log (requests are kept 30 days).`}
            />,
            404,
          )
          return
        }
        send(ctx, <RequestPage chrome={chromeOf(signed, 'requests')} request={request} />)
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/data$/,
      handle: (ctx, _match, signed) => {
        send(
          ctx,
          <DataPage
            chrome={chromeOf(signed, 'data', flashOf(signed))}
            publishers={top.read(clock()).publishers}
            dataSets={deps.dataSets()}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/publishers\/([^/]+)\/(enable|disable)$/,
      handle: (ctx, match, signed) => {
        const slug = slugOf(match)
        const enable = match[2] === 'enable'
        return act(ctx, signed, '/dashboard/data', () => {
          deps.publishers.setEnabled(slug, enable)
          return { notice: `Publisher ${slug} ${enable ? 'enabled' : 'disabled'}.` }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/publishers\/([^/]+)\/sync$/,
      handle: (ctx, match, signed) => {
        const slug = slugOf(match)
        return act(ctx, signed, '/dashboard/data', () => {
          const outcome = deps.publishers.syncNow(slug)
          return outcome.started
            ? { notice: `Sync of ${slug} started; reload to see its result.` }
            : { error: `Sync of ${slug} refused: ${outcome.reason}.` }
        })
      },
    },
  ]

  const signInPage = (ctx: Context, status = 200, error?: string, email?: string) =>
    send(ctx, <SignInPage chrome={{ error }} noOperator={!hasOperators(db)} email={email} />, status)

  const signIn = async (ctx: Context) => {
    const form = ctx.state.form as URLSearchParams
    const email = (form.get('email') ?? '').trim()
    const password = form.get('password') ?? ''
    const now = clock()
    const scopes = signInScopes(email, ctx.request.ip)
    const wait = signInRetryAfter(live, scopes, now)
    if (wait > 0) {
      ctx.set('Retry-After', String(wait))
      return signInPage(
        ctx,
        429,
        `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minute(s).`,
        email,
      )
    }
    const credentials = operatorCredentials(db, email)
    const valid = await verifyPassword(password, credentials?.passwordHash)
    if (!valid || !credentials) {
      await writeWhenFree(() => recordSignInFailure(live, scopes, clock()))
      return signInPage(ctx, 401, 'That email and password do not match an operator.', email)
    }
    await writeWhenFree(() => clearAccountFailures(live, scopes[0] as string))
    // Sessions past their expiry go as a new one starts: the table holds only live ones.
    const { token } = await writeWhenFree(() => {
      pruneSessions(live, clock())
      return startSession(live, credentials.id, clock())
    })
    ctx.set('Set-Cookie', sessionCookie(token, secure))
    seeOther(ctx, '/dashboard')
  }

  /** Every /dashboard request: sign-in and sign-out, else a session, else the sign-in page. */
  return async (ctx: Context): Promise<void> => {
    const { method, path } = ctx.request
    if (method === 'POST') {
      if (!sameOrigin(ctx, config.dashboardUrl)) {
        send(
          ctx,
          <RefusedPage
            chrome={{}}
            reason="This form was sent from another site, so it was refused and nothing changed."
          />,
          403,
        )
        return
      }
      ctx.state.form = await readForm(ctx)
    }
    if (path === '/dashboard/sign-in') {
      if (method === 'POST') return signIn(ctx)
      return signInPage(ctx)
    }
    const token = sessionToken(ctx)
    const session = token ? await writeWhenFree(() => readSession(live, token, clock())) : undefined
    const operator = session && operatorById(db, session.operatorId)
    if (!token || !session || !operator) {
      if (token) ctx.set('Set-Cookie', clearedCookie(secure))
      if (method === 'GET' && !path.endsWith('.json'))
        return signInPage(ctx, path === '/dashboard' || path === '/dashboard/' ? 200 : 401)
      send(
        ctx,
        <RefusedPage
          chrome={{}}
          reason="You are not signed in (or your session ended). Sign in and try again."
        />,
        401,
      )
      return
    }
    const signed: Signed = { token, session, email: operator.email }
    if (method === 'POST') {
      if ((ctx.state.form as URLSearchParams).get('_csrf') !== session.csrf) {
        send(
          ctx,
          <RefusedPage
            chrome={chromeOf(signed, undefined)}
            reason="This form is out of date or was not sent by the dashboard; nothing changed. Reload the page and try again."
          />,
          403,
        )
        return
      }
      if (path === '/dashboard/sign-out') {
        await writeWhenFree(() => endSession(live, token))
        ctx.set('Set-Cookie', clearedCookie(secure))
        seeOther(ctx, '/dashboard/sign-in')
        return
      }
    }
    for (const route of routes) {
      if (route.method !== method && !(route.method === 'GET' && method === 'HEAD')) continue
      const match = route.pattern.exec(path)
      if (!match) continue
      try {
        await route.handle(ctx, match, signed)
      } catch (error) {
        if (!(error instanceof UserError)) throw error
        send(ctx, <RefusedPage chrome={chromeOf(signed, undefined)} reason={error.message} />, 404)
      }
      return
    }
    send(ctx, <RefusedPage chrome={chromeOf(signed, undefined)} reason="Nothing is here." />, 404)
  }
}
