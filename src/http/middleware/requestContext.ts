import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'
import type { UsageCounter } from '../../accounts/usage.js'
import type { Clock } from '../../clock.js'
import type { RequestLog } from '../../stats/requestLog.js'
import { pathBase } from '../pathBase.js'
import type { Resolution } from '../routes.js'
import type { RequestState } from '../state.js'
import { isUuid } from '../../uuid.js'

let prefixMs = -1
let prefix = ''

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids in time order land at the end
 * of request_log's primary-key index instead of at random pages, which made each logged row several times
 * dearer. Built from the platform's randomUUID (pooled randomness, about 0.1 µs) with the time written over
 * its first 13 hex digits and version nibble; the `uuid` package's v7 costs about 7 µs a call.
 */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  if (nowMs !== prefixMs) {
    const hex = nowMs.toString(16).padStart(12, '0')
    prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`
    prefixMs = nowMs
  }
  return prefix + randomUUID().slice(15)
}

/** Answers that do not count against a plan: the caller was not served (5xx), not known (401) or refused (429). */
export const isUncounted = (status: number) => status >= 500 || status === 401 || status === 429

/**
 * Outermost: gives every response its request id (and echoes a caller's UUID), refunds usage for
 * answers that must not count, and records the request once its response has gone out.
 */
export function requestContext(deps: {
  usage: UsageCounter
  log: RequestLog
  clock: Clock
  /** What the router makes of a method and path, for a request refused before routing (401, 429, 405). */
  resolve: (method: string, path: string) => Resolution
}): Middleware<RequestState> {
  // HEAD is answered as GET.
  const resolutionOf = (method: string, path: string) =>
    deps.resolve(method === 'HEAD' ? 'GET' : method, path)
  const endpointOf = (resolution: Resolution) =>
    resolution.kind === 'endpoint' ? resolution.endpoint : undefined
  return async (ctx, next) => {
    const startedAt = deps.clock()
    const started = performance.now()
    const requestId = timeOrderedUuid()
    ctx.state.requestId = requestId
    const base = pathBase(ctx.request.path)
    ctx.state.base = base
    ctx.state.shape = base === 'fhir' ? 'fhir' : 'problem'
    ctx.response.set('X-Request-Id', requestId)
    const callerId = ctx.request.get('X-Request-Id')
    if (isUuid(callerId)) ctx.response.set('X-Correlation-Id', callerId)
    const socket = ctx.req.socket
    const bytesBefore = socket.bytesWritten

    // `on`, not `once`: a response closes once, and `once` would wrap the listener for every request.
    ctx.res.on('close', () => {
      if (ctx.state.unlogged) return
      const { method, path } = ctx.request
      const endpoint = ctx.state.endpoint ?? endpointOf(resolutionOf(method, path))
      const status = ctx.response.status
      const record = {
        requestId,
        at: startedAt,
        orgId: ctx.state.owner?.orgId ?? null,
        keyId: ctx.state.owner?.keyId ?? null,
        method,
        path: path.slice(0, 2048),
        route: endpoint?.path ?? null,
        group: endpoint?.tag ?? null,
        status,
        durationMs: performance.now() - started,
        bytes: socket.bytesWritten - bytesBefore,
      }
      // What anyone who can reach the port can send, without a key or to no path, is counted, not stored.
      if (status === 401 || (endpoint === undefined && status >= 400))
        deps.log.refused(record, ctx.state.base)
      else deps.log.record(record)
    })

    try {
      await next()
    } finally {
      // Resolved once here for a request refused before routing; the request log reads it on close.
      // Patient data is never kept by a cache on the way, nor is any other answer of its path (a refusal, a
      // 405, OPTIONS: the body may have been read).
      const resolution = ctx.state.endpoint ? undefined : resolutionOf(ctx.request.method, ctx.request.path)
      if (resolution) ctx.state.endpoint = endpointOf(resolution)
      const patientData =
        ctx.state.endpoint?.patientData === true ||
        (resolution?.kind === 'method-not-allowed' && resolution.patientData)
      if (patientData) ctx.response.set('Cache-Control', 'no-store')
      const reservation = ctx.state.reservation
      if (reservation && isUncounted(ctx.response.status)) {
        try {
          deps.usage.refund(reservation)
        } catch {
          // The store failed again: the request stays counted, which errs on the caller's side only once.
        }
      }
    }
  }
}
