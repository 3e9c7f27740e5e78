import type { Middleware, Next } from 'koa'
import type { KeyOwner } from '../../accounts/keys.js'
import { type ReserveResult, startOfNextMonth, type UsageCounter } from '../../accounts/usage.js'
import type { Clock } from '../../clock.js'
import { ApiError } from '../errors.js'
import type { RequestState } from '../state.js'

/** Counts the request against its organization's plan, or refuses it with 429 and Retry-After. */
export function enforceLimits(deps: {
  usage: UsageCounter
  clock: Clock
  dashboardUrl: string
}): Middleware<RequestState> {
  const admit = (state: RequestState, owner: KeyOwner, result: ReserveResult, next: Next) => {
    if (!result.ok) {
      const headers = { 'Retry-After': String(result.retryAfterSeconds) }
      if (result.scope === 'month') {
        const resumes = new Date(startOfNextMonth(deps.clock())).toISOString()
        throw new ApiError(429, {
          headers,
          detail: `Organization ${owner.orgSlug} has used its ${result.limit} requests for this month on the ${owner.plan.name} plan; requests are refused until ${resumes}. Do not retry automatically; change plan at ${deps.dashboardUrl}.`,
        })
      }
      throw new ApiError(429, {
        headers,
        detail: `Organization ${owner.orgSlug} has made its ${result.limit} requests for this minute on the ${owner.plan.name} plan; retry after ${result.retryAfterSeconds} s.`,
      })
    }
    state.reservation = result.reservation
    return next()
  }
  return (ctx, next) => {
    const owner = ctx.state.owner
    if (!owner) return next()
    const result = deps.usage.reserve(owner.orgId, owner.plan)
    // A promise only while a lease waits for the live file's lock; otherwise no await, and no tick, is spent.
    if (result instanceof Promise) return result.then((settled) => admit(ctx.state, owner, settled, next))
    return admit(ctx.state, owner, result, next)
  }
}
