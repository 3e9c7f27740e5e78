import type { KeyOwner } from '../accounts/keys.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Db } from '../db/open.js'
import { ApiError, type ParamIssue } from '../http/errors.js'
import type { Routes } from '../http/routes.js'
import { checkParams, groupQuery, type ParamShape, type ParamSpec, type ParamValues } from './params.js'

export type HttpMethod = 'GET' | 'POST'

/** Everything a handler may use: the store, the resolved config, the clock. */
export interface Services {
  db: Db
  config: Config
  clock: Clock
  /** How upstream clients wait before their one retry; injected in tests so retries cost no wall time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** The endpoint table itself, for the documents generated from it and for batch dispatch. */
  routes: Routes
}

export interface EndpointRequest<P extends ParamShape> {
  params: ParamValues<P>
  /** The query as received, for self links. */
  query: URLSearchParams
  pathParams: Record<string, string>
  /** Parsed JSON body, for endpoints that declare one. */
  body: unknown
  owner: KeyOwner | undefined
  requestId: string
  /** Aborted when the caller's time budget (a batch's 60 s) runs out. */
  signal: AbortSignal
}

export interface EndpointResponse {
  status?: number
  body: unknown
  headers?: Record<string, string>
  /** Media type when the body is not JSON (e.g. the HTML error documentation). */
  contentType?: string
  /** Sends a strong ETag and answers 304 to a matching If-None-Match. */
  etag?: boolean
}

/** Documentation of one response for /openapi.json; `schema` is a JSON Schema or a component reference. */
export interface ResponseDoc {
  description: string
  schema?: Record<string, unknown>
  contentType?: string
}

/** How the FHIR CapabilityStatement describes an endpoint of the FHIR base. */
export interface FhirInteraction {
  resource?: string
  interaction?: 'read' | 'search-type' | 'batch' | 'capabilities'
  operation?: { name: string; definition: string }
}

export interface Endpoint<P extends ParamShape = ParamShape> {
  method: HttpMethod
  /** @koa/router path, e.g. `/v1/fhir/r4/Location/:id`. */
  path: string
  summary: string
  description?: string
  tag: string
  params: P
  /** Path parameters, checked like query ones. */
  pathParams?: Record<string, ParamSpec>
  /** Rules that involve several parameters ("cannot stand alone"); run after each value passed. */
  rules?: (values: ParamValues<P>, services: Services) => ParamIssue[]
  /** A JSON body is read, at most this many bytes. */
  body?: { maxBytes: number; description: string }
  responses: Record<number, ResponseDoc>
  fhir?: FhirInteraction
  handler: (request: EndpointRequest<P>, services: Services) => EndpointResponse | Promise<EndpointResponse>
}

/** Typed where it is written; stored erased, since the table holds endpoints of every parameter shape. */
export function defineEndpoint<P extends ParamShape>(endpoint: Endpoint<P>): Endpoint {
  return endpoint as unknown as Endpoint
}

export interface Invocation {
  query: URLSearchParams
  pathParams: Record<string, string>
  body: unknown
  owner: KeyOwner | undefined
  requestId: string
  signal: AbortSignal
}

/**
 * Runs one endpoint exactly as the HTTP route and the batch dispatcher both do: strict parameters,
 * then the handler. Throws ApiError for every refusal.
 */
export async function invokeEndpoint(
  endpoint: Endpoint,
  invocation: Invocation,
  services: Services,
): Promise<EndpointResponse> {
  const checked = checkParams(endpoint.params, groupQuery(invocation.query))
  if (!checked.ok) throw ApiError.invalid(checked.issues)
  if (endpoint.pathParams) {
    const raw = new Map(Object.entries(invocation.pathParams).map(([name, value]) => [name, [value]]))
    const path = checkParams(endpoint.pathParams, raw)
    if (!path.ok) throw ApiError.invalid(path.issues)
  }
  const ruleIssues = endpoint.rules?.(checked.values, services) ?? []
  if (ruleIssues.length > 0) throw ApiError.invalid(ruleIssues)
  return endpoint.handler(
    {
      params: checked.values,
      query: invocation.query,
      pathParams: invocation.pathParams,
      body: invocation.body,
      owner: invocation.owner,
      requestId: invocation.requestId,
      signal: invocation.signal,
    },
    services,
  )
}
