import type { Context } from 'koa'
import { operatorById } from '../accounts/operators.js'
import { endSession, readSession } from '../accounts/sessions.js'
import { writeWhenFree } from '../db/busy.js'
import { isStoreUnavailable } from '../db/open.js'
import { STORE_RETRY_AFTER_SECONDS } from '../http/middleware/renderErrors.js'
import { UserError } from '../userError.js'
import { readForm } from './forms.js'
import { formOf, Kit, type Route, type Signed } from './kit.js'
import type { DashboardDeps } from './operations.js'
import { RefusedPage } from './pages/signIn.js'
import { seeOther, send } from './respond.js'
import { dataRoutes } from './routes/data.js'
import { organizationRoutes } from './routes/organizations.js'
import { overviewRoutes } from './routes/overview.js'
import { requestRoutes } from './routes/requests.js'
import { clearedCookie, sameOrigin, sessionToken } from './session.js'
import { signIn, signInPage } from './signIn.js'

/**
 * Every /dashboard request, for one app: a POST from another origin is refused before anything is read;
 * sign-in is open; everything else needs a live session, and a POST its form token too.
 */
export function dashboardPages(deps: DashboardDeps): (ctx: Context) => Promise<void> {
  const { db, live, config, clock } = deps
  const kit = new Kit(deps)
  const routes: Route[] = [
    ...overviewRoutes(kit),
    ...organizationRoutes(kit),
    ...requestRoutes(kit),
    ...dataRoutes(kit),
  ]
  // Secure whenever callers reach the server over https (its base URL), as a proxy in front would serve it.
  const secure = config.baseUrl.startsWith('https:') || config.dashboardUrl.startsWith('https:')
  const refuse = (ctx: Context, status: number, reason: string, signed?: Signed) =>
    send(ctx, <RefusedPage chrome={signed ? kit.chromeOf(signed, undefined) : {}} reason={reason} />, status)

  const answer = async (ctx: Context) => {
    const { method, path } = ctx.request
    if (method === 'POST') {
      if (!sameOrigin(ctx, config.dashboardUrl))
        return refuse(
          ctx,
          403,
          'This form was sent from another site, so it was refused and nothing changed.',
        )
      ctx.state.form = await readForm(ctx)
    }
    if (path === '/dashboard/sign-in')
      return method === 'POST' ? signIn(kit, ctx, secure) : signInPage(kit, ctx)

    const token = sessionToken(ctx)
    const session = token ? await writeWhenFree(() => readSession(live, token, clock())) : undefined
    const operator = session && operatorById(db, session.operatorId)
    if (!token || !session || !operator) {
      if (token) ctx.set('Set-Cookie', clearedCookie(secure))
      if (method === 'GET' && !path.endsWith('.json'))
        return signInPage(kit, ctx, path === '/dashboard' || path === '/dashboard/' ? 200 : 401)
      return refuse(ctx, 401, 'You are not signed in (or your session ended). Sign in and try again.')
    }
    const signed: Signed = { token, session, email: operator.email }
    if (method === 'POST') {
      if (formOf(ctx).get('_csrf') !== session.csrf) {
        const reason =
          'This form is out of date or was not sent by the dashboard; nothing changed. Reload the page and try again.'
        return refuse(ctx, 403, reason, signed)
      }
      if (path === '/dashboard/sign-out') {
        await writeWhenFree(() => endSession(live, token))
        ctx.set('Set-Cookie', clearedCookie(secure))
        return seeOther(ctx, '/dashboard/sign-in')
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
        refuse(ctx, 404, error.message, signed)
      }
      return
    }
    refuse(ctx, 404, 'Nothing is here.', signed)
  }

  // An operator's browser gets a page, not the API's JSON problem, when the store cannot be written (a full
  // disk) or stays locked.
  return async (ctx) => {
    try {
      await answer(ctx)
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error
      ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS))
      const reason =
        'The store cannot be used at the moment: its disk may be full, or an import may hold it. Try again in a few seconds.'
      send(ctx, <RefusedPage title="Unavailable" chrome={{}} reason={reason} />, 503)
    }
  }
}
