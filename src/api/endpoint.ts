import type { KeyOwner } from '../accounts/keys.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Db } from '../db/open.js'
import type { AnswerCache, Reuse } from '../http/answerCache.js'
import { ApiError, type ParamIssue } from '../http/errors.js'
import type { Routes } from '../http/routes.js'
import {
  checkParams,
  groupQuery,
  malformedEscapes,
  type ParamShape,
  type ParamSpec,
  type ParamValues,
} from './params.js'
import { mergeRaw, readParametersBody } from './parametersBody.js'

export type HttpMethod = 'GET' | 'POST'

/**
 * What every handler may use, whatever its domain: the store, the resolved config, the clock, the endpoint
 * table. What a domain needs beyond it is its own per-app state (src/api/domain.ts).
 */
export interface Services {
  db: Db
  config: Config
  clock: Clock
  /** The endpoint table itself, for the documents generated from it and for batch dispatch. */
  routes: Routes
  /** How long a FHIR batch may run before its running entries answer 504. */
  batchBudgetMs: number
  /** How long a lone call that waits on an upstream source may run before it answers 504. */
  upstreamDeadlineMs: number
  /** Answers kept for identical requests, over HTTP and in batches alike. */
  answers: AnswerCache
  /**
   * Puts a fault that failed an answer (a bug, a store that cannot be used) where the operator sees it; for
   * what answers without passing the HTTP error handler (a batch's entries).
   */
  reportFault: (error: unknown) => void
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
  /**
   * The answer goes to its caller gzipped: a source may then give large stored resources as their release
   * keeps them compressed, their text unread (see StoredJson).
   */
  takesGzip?: boolean
}

export interface EndpointResponse {
  status?: number
  body: unknown
  headers?: Record<string, string>
  /** Media type when the body is not JSON (e.g. the HTML error documentation). */
  contentType?: string
  /** Sends an entity tag (one per coding) and answers 304 to a matching If-None-Match. */
  etag?: boolean
  /**
   * The same GET may be answered with this response again, without running the handler, until the
   * database changes (unless `stillTrue` says the change leaves it true) and, with `through` (epoch ms),
   * while the clock reads at most that. Only for answers that depend on the path, the query and the
   * database alone: not on the caller, nor on the time past `through` (src/http/answerCache.ts).
   */
  reuse?: Reuse
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
  /** A CapabilityStatement the base then instantiates (e.g. the terminology server's). */
  instantiates?: string
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
  /**
   * A JSON body is read, at most this many bytes. With `parameters`, it is a FHIR Parameters resource
   * whose items are this endpoint's parameters, checked with the URL's by the same declarations.
   */
  body?: { maxBytes: number; description: string; parameters?: boolean }
  responses: Record<number, ResponseDoc>
  fhir?: FhirInteraction
  /**
   * It takes patient data: no query parameter at all (not even `_format`), and every answer, errors
   * included, says `Cache-Control: no-store`.
   */
  patientData?: boolean
  /** Why a FHIR batch entry may not ask for this endpoint (the batch itself, say); unset: it may. */
  notInBatch?: string
  /**
   * The handler may wait on an upstream source: its work is aborted when the caller hangs up, and, `call`,
   * answers 504 past the whole-call deadline (SVC_UPSTREAM_DEADLINE_S); a `batch` keeps its own budget.
   */
  waits?: 'call' | 'batch'
  /**
   * What the answers are made from, brought up to date with the store before the answer cache or the handler
   * looks: a promise while that runs in slices off the event loop (an index being loaded after a sync),
   * undefined when it is up to date. Given the query, for what depends on what is asked; the handler still
   * checks the parameters.
   */
  ready?: (query: URLSearchParams) => Promise<void> | undefined
  handler: (request: EndpointRequest<P>, services: Services) => EndpointResponse | Promise<EndpointResponse>
}

/** Typed where it is written; stored erased, since the table holds endpoints of every parameter shape. */
export function defineEndpoint<P extends ParamShape>(endpoint: Endpoint<P>): Endpoint {
  return endpoint as unknown as Endpoint
}

/**
 * A FHIR operation served by GET (URL parameters) and by POST (a Parameters body, URL parameters too),
 * declared once: both endpoints share the parameters, rules and handler. Body-only parameters (complex
 * types) are left out of the GET form.
 */
export function defineOperation<P extends ParamShape>(
  operation: Omit<Endpoint<P>, 'method' | 'body'> & { maxBodyBytes: number },
): Endpoint[] {
  const { maxBodyBytes, ...shared } = operation
  const urlParams = Object.fromEntries(
    Object.entries(shared.params).filter(([, declared]) => !declared.bodyOnly),
  ) as P
  return [
    defineEndpoint({ ...shared, method: 'GET', params: urlParams }),
    defineEndpoint({
      ...shared,
      method: 'POST',
      body: {
        maxBytes: maxBodyBytes,
        parameters: true,
        description: 'A FHIR Parameters resource carrying the operation parameters.',
      },
    }),
  ]
}

export interface Invocation {
  query: URLSearchParams
  /** The query as it came, escapes and all, when it came as text (a lone request, a batch entry). */
  rawQuery?: string
  pathParams: Record<string, string>
  body: unknown
  owner: KeyOwner | undefined
  requestId: string
  signal: AbortSignal
  /** EndpointRequest.takesGzip; a batch's entries never do, being spliced into the batch's answer as text. */
  takesGzip?: boolean
}

/**
 * Runs one endpoint exactly as the HTTP route and the batch dispatcher both do: strict parameters,
 * then the handler. Throws ApiError for every refusal (synchronously, or as the rejection of a handler
 * that waits). A handler that answers at once is answered at once: a batch runs its entries without a
 * promise each.
 */
export function invokeEndpoint(
  endpoint: Endpoint,
  invocation: Invocation,
  services: Services,
): EndpointResponse | Promise<EndpointResponse> {
  let raw = groupQuery(invocation.query)
  const malformed = invocation.rawQuery === undefined ? [] : malformedEscapes(invocation.rawQuery)
  let found: { names?: ParamIssue[]; values?: ParamIssue[] } = {
    values: malformed.map((name) => ({
      path: [name],
      message: `"${name}" holds a % that starts no percent-escape; write a % as %25`,
    })),
  }
  if (endpoint.body?.parameters) {
    const read = readParametersBody(invocation.body, endpoint.params)
    raw = mergeRaw(raw, read.raw)
    found = { names: read.nameIssues, values: [...(found.values ?? []), ...read.valueIssues] }
  }
  const checked = checkParams(endpoint.params, raw, found)
  if (!checked.ok) throw ApiError.invalid(checked.issues)
  if (endpoint.pathParams) {
    const given = new Map(Object.entries(invocation.pathParams).map(([name, value]) => [name, [value]]))
    const path = checkParams(endpoint.pathParams, given)
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
      takesGzip: invocation.takesGzip,
    },
    services,
  )
}
