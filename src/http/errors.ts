import { pathBase } from './pathBase.js'

/**
 * One error type for every failure a handler or middleware can raise, and the two renderers the spec
 * names: RFC 9457 problem outside the FHIR base, OperationOutcome under it.
 */

export interface ParamIssue {
  /** Parameter path: `['limit']`, or `['parameter', 'property']` for a body member. */
  path: string[]
  message: string
  /** FHIR issue-type code for this fault when it is not the error's own (e.g. `too-long`). */
  fhirCode?: string
}

/** The spec's shared status table: problem slug, fixed title, default OperationOutcome code. */
export const STATUS_TYPES = {
  400: { slug: 'invalid-request', title: 'Invalid request', fhirCode: 'invalid' },
  401: { slug: 'unauthorized', title: 'Unauthorized', fhirCode: 'login' },
  404: { slug: 'not-found', title: 'Not found', fhirCode: 'not-found' },
  405: { slug: 'method-not-allowed', title: 'Method not allowed', fhirCode: 'not-supported' },
  406: { slug: 'not-acceptable', title: 'Not acceptable', fhirCode: 'not-supported' },
  408: { slug: 'request-timeout', title: 'Request timeout', fhirCode: 'timeout' },
  410: { slug: null, title: 'Gone', fhirCode: 'expired' },
  413: { slug: null, title: 'Request body too large', fhirCode: 'too-long' },
  415: { slug: 'unsupported-media-type', title: 'Unsupported media type', fhirCode: 'not-supported' },
  431: { slug: 'headers-too-large', title: 'Request header fields too large', fhirCode: 'too-long' },
  429: { slug: 'rate-limited', title: 'Rate limited', fhirCode: 'throttled' },
  500: { slug: 'server-error', title: 'Server error', fhirCode: 'exception' },
  502: { slug: null, title: 'Bad gateway', fhirCode: 'exception' },
  503: { slug: 'unavailable', title: 'Service unavailable', fhirCode: 'transient' },
  504: { slug: null, title: 'Gateway timeout', fhirCode: 'timeout' },
} as const satisfies Record<number, { slug: string | null; title: string; fhirCode: string }>

export type ErrorStatus = keyof typeof STATUS_TYPES

export interface ApiErrorInit {
  detail: string
  /** Overrides the status's default OperationOutcome code (e.g. `throttled` or `not-supported` on 503). */
  fhirCode?: string
  issues?: ParamIssue[]
  headers?: Record<string, string>
}

export class ApiError extends Error {
  readonly status: ErrorStatus
  readonly detail: string
  readonly fhirCode: string
  readonly issues: ParamIssue[]
  readonly headers: Record<string, string>

  constructor(status: ErrorStatus, init: ApiErrorInit) {
    super(init.detail)
    this.name = 'ApiError'
    this.status = status
    this.detail = init.detail
    this.fhirCode = init.fhirCode ?? STATUS_TYPES[status].fhirCode
    this.issues = init.issues ?? []
    this.headers = init.headers ?? {}
  }

  static invalid(issues: ParamIssue[], detail?: string): ApiError {
    const summary =
      detail ?? (issues.length === 1 ? issues[0]?.message : `${issues.length} parameters are invalid.`)
    return new ApiError(400, { detail: summary ?? 'The request is invalid.', issues })
  }
}

export type ErrorShape = 'problem' | 'fhir'

export { FHIR_BASE } from './pathBase.js'

/** The error shape of a request path's base (src/http/pathBase.ts): any spelling of the FHIR base is FHIR. */
export function errorShapeFor(path: string): ErrorShape {
  return pathBase(path) === 'fhir' ? 'fhir' : 'problem'
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'
export const FHIR_CONTENT_TYPE = 'application/fhir+json; charset=utf-8'

export function problemBody(error: ApiError, docsUrl: string, requestId: string): Record<string, unknown> {
  const type = STATUS_TYPES[error.status]
  const body: Record<string, unknown> = {
    type: `${docsUrl}/errors#${type.slug ?? 'server-error'}`,
    title: type.title,
    status: error.status,
    detail: error.detail,
    instance: `urn:uuid:${requestId}`,
  }
  if (error.status === 400) {
    body.issues = error.issues.map((issue) => ({ path: issue.path, message: issue.message }))
  }
  return body
}

export function operationOutcome(error: ApiError): Record<string, unknown> {
  const severity = error.status >= 500 && error.status !== 503 ? 'fatal' : 'error'
  const issues =
    error.issues.length > 0
      ? error.issues.map((issue) => ({
          severity,
          code: issue.fhirCode ?? error.fhirCode,
          details: { text: issue.message },
          diagnostics: error.detail,
          expression: [issue.path.join('.')],
        }))
      : [{ severity, code: error.fhirCode, details: { text: error.detail }, diagnostics: error.detail }]
  return { resourceType: 'OperationOutcome', issue: issues }
}

/** Any non-ApiError is an internal fault: never leak its message. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  return new ApiError(500, {
    detail: 'The server met an unexpected condition. Retry once after a short wait.',
  })
}
