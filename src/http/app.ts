import Koa from 'koa'
import { keyOwnerLookup } from '../accounts/keys.js'
import { UsageCounter } from '../accounts/usage.js'
import type { Endpoint, Services } from '../api/endpoint.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Db } from '../db/open.js'
import { BATCH_BUDGET_MS } from '../fhir/batch.js'
import { RequestLog } from '../stats/requestLog.js'
import { AnswerCache } from './answerCache.js'
import { isStoreUnavailable } from '../db/open.js'
import { throttledErrorLog, throttledStoreLog } from './errorLog.js'
import { authenticate } from './middleware/authenticate.js'
import { compressWhenAccepted } from './middleware/compressWhenAccepted.js'
import { enforceLimits } from './middleware/enforceLimits.js'
import { negotiate } from './middleware/negotiate.js'
import { renderErrors } from './middleware/renderErrors.js'
import { requestContext } from './middleware/requestContext.js'
import { dispatch, Routes } from './routes.js'
import type { RequestState } from './state.js'

/** Error codes of a response cut short because the caller closed the connection. */
const CALLER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECANCELED', 'ERR_STREAM_PREMATURE_CLOSE'])

export interface AppOptions {
  db: Db
  /** Where each request's writes go (src/db/live.ts), so a long write on `db` never holds a request up. */
  live: Db
  config: Config
  clock: Clock
  /** Where unexpected faults are reported (never with request secrets). */
  onInternalError?: (error: unknown) => void
  /** Where a request failed by the store is said (default: a line a minute per SQLite code on stderr). */
  onStoreUnavailable?: (error: unknown) => void
  requestLog?: { flushEveryMs?: number; busyTimeoutMs?: number }
  usage?: { settleEveryMs?: number; busyTimeoutMs?: number }
  /** Every endpoint served, one declaration each (the composition root gathers them: src/app/server.ts). */
  endpoints: readonly Endpoint[]
  /** A FHIR batch's running-time budget; 60 s unless a test shortens it. */
  batchBudgetMs?: number
  /** A lone call's deadline when it waits on an upstream source (SVC_UPSTREAM_DEADLINE_S). */
  upstreamDeadlineMs?: number
  /** How long a request body may take to arrive whole; 30 s unless a test shortens it. */
  bodyTimeoutMs?: number
  /** Pages that are not API endpoints (the dashboard, its files), answered before the key check. */
  pages?: Koa.Middleware<RequestState>
}

export interface App {
  koa: Koa<RequestState>
  routes: Routes
  requestLog: RequestLog
  usage: UsageCounter
}

/**
 * request id → compress → errors → auth → limits → negotiate → dispatch. The key check comes first under
 * /v1, so that a caller without a key hears that before any other fault of its request.
 * On the path every request takes, middleware goes through ctx.request and ctx.response rather than the
 * ctx shorthands (ctx.path, ctx.set): Koa makes those with the delegates package, whose accessors all share
 * one call site V8 cannot specialise, and they cost about 1 µs a request in all.
 */
export function createApp(options: AppOptions): App {
  const { db, live, config, clock } = options
  const routes = new Routes(options.endpoints)
  const onInternalError =
    options.onInternalError ?? throttledErrorLog((line, error) => console.error(line, error), clock)
  const onStoreUnavailable =
    options.onStoreUnavailable ?? throttledStoreLog((line) => console.error(line), clock)
  const services: Services = {
    db,
    config,
    clock,
    routes,
    batchBudgetMs: options.batchBudgetMs ?? BATCH_BUDGET_MS,
    upstreamDeadlineMs: options.upstreamDeadlineMs ?? 30_000,
    answers: new AnswerCache(config.answerCacheMb * 1024 * 1024),
    reportFault: (error) => (isStoreUnavailable(error) ? onStoreUnavailable : onInternalError)(error),
  }
  const usage = new UsageCounter(live, clock, options.usage)
  const requestLog = new RequestLog(live.name, clock, { ...options.requestLog, watchEventLoop: true })
  const koa = new Koa<RequestState>()
  // Koa reports here what failed after the answer began (a stream cut off); a caller hanging up is not a
  // fault of ours, and Koa's default would print its stack for every one.
  koa.on('error', (error: unknown) => {
    if (!CALLER_GONE.has((error as { code?: string }).code ?? '')) onInternalError(error)
  })
  koa.use(
    requestContext({
      usage,
      log: requestLog,
      clock,
      resolve: (method, path) => routes.resolve(method, path),
    }),
  )
  koa.use(compressWhenAccepted())
  koa.use(
    renderErrors({
      docsUrl: config.docsUrl,
      reportFault: services.reportFault,
    }),
  )
  if (options.pages) koa.use(options.pages)
  koa.use(authenticate({ realm: new URL(config.baseUrl).host, lookup: keyOwnerLookup(db) }))
  koa.use(enforceLimits({ usage, clock, dashboardUrl: config.dashboardUrl }))
  koa.use(negotiate())
  koa.use(dispatch(routes, services, { bodyTimeoutMs: options.bodyTimeoutMs }))
  return { koa, routes, requestLog, usage }
}
