import type { Middleware } from 'koa'
import { isStoreUnavailable } from '../../db/open.js'
import {
  ApiError,
  FHIR_CONTENT_TYPE,
  operationOutcome,
  PROBLEM_CONTENT_TYPE,
  problemBody,
  toApiError,
} from '../errors.js'
import type { RequestState } from '../state.js'

/** Seconds a caller should wait when the store is momentarily unreadable (locked, being replaced). */
export const STORE_RETRY_AFTER_SECONDS = 2

function storeUnavailable(): ApiError {
  return new ApiError(503, {
    detail:
      'The data store cannot be used at the moment; this says nothing about the request. Retry after the time in Retry-After.',
    fhirCode: 'transient',
    // An answer saying the store could not be read must never be served again from a cache.
    headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' },
  })
}

/**
 * The answer to what a request's work threw, over HTTP and in a batch's entries alike: 503 when the store
 * cannot be used, the error's own, or 500; what the operator must hear of (the store, a bug) goes to `report`.
 */
export function answerToThrown(thrown: unknown, report: (error: unknown) => void): ApiError {
  const unavailable = isStoreUnavailable(thrown)
  const error = unavailable ? storeUnavailable() : toApiError(thrown)
  if (unavailable || error.status === 500) report(thrown)
  return error
}

/** Renders every failure below it in the shape of its base: problem+json or OperationOutcome. */
export function renderErrors(options: {
  docsUrl: string
  reportFault: (error: unknown) => void
}): Middleware<RequestState> {
  // Middleware below that is not async throws out of next() as a rejected promise: koa-compose turns it so.
  return (ctx, next) =>
    next().catch((thrown: unknown) => {
      const error = answerToThrown(thrown, options.reportFault)
      ctx.status = error.status
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value)
      if (ctx.state.shape === 'fhir') {
        ctx.type = FHIR_CONTENT_TYPE
        ctx.body = JSON.stringify(operationOutcome(error))
      } else {
        ctx.type = PROBLEM_CONTENT_TYPE
        ctx.body = JSON.stringify(problemBody(error, options.docsUrl, ctx.state.requestId))
      }
    })
}
