import type { Context, Middleware } from 'koa'
import { serveAsset } from '../docs/assets.js'
import type { RequestState } from '../http/state.js'
import type { DashboardDeps } from './operations.js'

/**
 * What every dashboard answer carries: no cache keeps it, no other site frames it, and scripts, styles and
 * requests come from this server only (no inline script; dashboard.js and uPlot are files under /assets).
 */
export const DASHBOARD_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
}

const isDashboard = (path: string) => path === '/dashboard' || path.startsWith('/dashboard/')

/**
 * The operator's dashboard under /dashboard and the files pages load under /assets, answered before the
 * API's key check: a dashboard session is a cookie on /dashboard only, and an API key opens nothing here.
 * Its pages (React's server renderer) are loaded on the first dashboard request, not by every server start.
 */
export function webPages(deps: DashboardDeps): Middleware<RequestState> {
  let pages: Promise<(ctx: Context) => Promise<void>> | undefined
  return async (ctx, next) => {
    const { path } = ctx.request
    if (isDashboard(path)) {
      // Operators' own pages are not API traffic: they are left out of the request log and svc top.
      ctx.state.unlogged = true
      ctx.set(DASHBOARD_HEADERS)
      // React loads its development build (several times slower, with checks meant for a developer's
      // console) unless NODE_ENV says production when it is first imported: pages are always rendered
      // with the production build unless the operator asked otherwise.
      process.env.NODE_ENV ??= 'production'
      pages ??= import('./app.js').then((module) => module.dashboardPages(deps))
      return (await pages)(ctx as unknown as Context)
    }
    if (path.startsWith('/assets/') && serveAsset(ctx as unknown as Context)) {
      ctx.state.unlogged = true
      return
    }
    return next()
  }
}
