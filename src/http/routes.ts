import { createHash } from 'node:crypto'
import { type Layer, Router } from '@koa/router'
import type { Context, Middleware } from 'koa'
import {
  type Endpoint,
  type EndpointResponse,
  type Invocation,
  invokeEndpoint,
  type Services,
} from '../api/endpoint.js'
import type { AnswerCache, PreparedAnswer } from './answerCache.js'
import type { Precompressed } from './gzipSplice.js'
import { readJsonBody } from './body.js'
import { entityTag, matchesIfNoneMatch } from './conditional.js'
import { COMPRESS_THRESHOLD } from './middleware/compressWhenAccepted.js'
import { ApiError, errorShapeFor } from './errors.js'
import { SplicedJson, toJson } from './json.js'
import type { RequestState } from './state.js'
import { routingPath } from './pathBase.js'

export type Resolution =
  | { kind: 'endpoint'; endpoint: Endpoint; pathParams: Record<string, string> }
  /** `patientData`: an endpoint of the path, by another method, serves patient data (its refusal is not cached either). */
  | { kind: 'method-not-allowed'; allow: string[]; patientData: boolean }
  | { kind: 'not-found' }

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'OPTIONS']
/** Paths whose resolution is remembered; past this the oldest is forgotten (ids make paths unbounded). */
const REMEMBERED_PATHS = 4096

/** The endpoint table, matched by @koa/router; shared by HTTP routing and the FHIR batch dispatcher. */
export class Routes {
  // Exact paths but for escaped route characters: any other spelling of a served path (case, dot segments) is
  // a 404 after the key check, which places every spelling by its canonical form (src/http/pathBase.ts).
  readonly #router = new Router({ sensitive: true })
  readonly #endpoints = new Map<Layer, Endpoint>()
  readonly #documents = new Map<string, unknown>()
  readonly #resolved = new Map<string, Resolution>()

  constructor(readonly endpoints: readonly Endpoint[]) {
    for (const endpoint of endpoints) {
      const layer = this.#router.register(endpoint.path, [endpoint.method], () => undefined) as Layer
      this.#endpoints.set(layer, endpoint)
    }
  }

  /** Documents derived from the table (OpenAPI, CapabilityStatement) are built once per table. */
  document<T>(name: string, build: (endpoints: readonly Endpoint[]) => T): T {
    if (!this.#documents.has(name)) this.#documents.set(name, build(this.endpoints))
    return this.#documents.get(name) as T
  }

  /**
   * Matching tries every route's pattern in turn; the table never changes, so a method and path resolve the
   * same way every time and are remembered (a batch of lookups resolves one path a hundred times).
   */
  resolve(method: string, path: string): Resolution {
    const key = `${method} ${path}`
    let resolution = this.#resolved.get(key)
    if (!resolution) {
      if (this.#resolved.size >= REMEMBERED_PATHS)
        this.#resolved.delete(this.#resolved.keys().next().value as string)
      resolution = this.#match(method, routingPath(path))
      this.#resolved.set(key, resolution)
    }
    return resolution
  }

  #match(method: string, path: string): Resolution {
    const match = this.#router.match(path, method)
    // A fixed path wins over a pattern, whatever their order: `InsurancePlan/$counties` is not a read of
    // InsurancePlan `$counties`.
    const served = match.pathAndMethod.filter((candidate) => this.#endpoints.has(candidate))
    const layer = served.find((candidate) => candidate.paramNames.length === 0) ?? served[0]
    if (layer) {
      const endpoint = this.#endpoints.get(layer) as Endpoint
      const pathParams = Object.freeze(layer.params(path, layer.captures(path), {}))
      return { kind: 'endpoint', endpoint, pathParams }
    }
    if (match.path.length === 0) return { kind: 'not-found' }
    const methods = new Set(match.path.flatMap((candidate) => candidate.methods))
    methods.add('OPTIONS')
    const patientData = match.path.some((candidate) => this.#endpoints.get(candidate)?.patientData === true)
    return {
      kind: 'method-not-allowed',
      allow: METHOD_ORDER.filter((name) => methods.has(name)),
      patientData,
    }
  }
}

export function notFound(path: string): ApiError {
  const base = errorShapeFor(path) === 'fhir' ? 'on the FHIR base' : 'here'
  return new ApiError(404, {
    detail: `Nothing is served ${base} at ${path}; see /openapi.json for every path.`,
  })
}

export function methodNotAllowed(method: string, allow: string[]): ApiError {
  return new ApiError(405, {
    detail: `${method} is not allowed on this path; allowed methods: ${allow.join(', ')}.`,
    headers: { Allow: allow.join(', ') },
  })
}

/** The content hash an answer's entity tags are made from (src/http/conditional.ts). */
const contentHash = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url')

const contentTypes = new Map<string, string>()

/** Koa's type setter looks the charset up in mime-db on every call; per media type the answer never changes. */
function setType(ctx: Context, mediaType: string): void {
  const known = contentTypes.get(mediaType)
  if (known !== undefined) {
    ctx.response.set('Content-Type', known)
    return
  }
  ctx.response.type = mediaType
  contentTypes.set(mediaType, ctx.response.get('Content-Type') as string)
}

/**
 * An answer of large stored resources whose release keeps them compressed (SplicedJson.precompressed): a
 * caller that takes gzip gets it spliced from those, and its bytes are put together, reading the resources'
 * text, only if it is sent as is.
 */
class PreparedPieces implements PreparedAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly contentType: string | undefined
  readonly length: number
  readonly precompressed: readonly (Buffer | Precompressed)[]

  constructor(
    response: EndpointResponse,
    private readonly body: SplicedJson,
    precompressed: readonly (Buffer | Precompressed)[],
  ) {
    this.status = response.status ?? 200
    this.headers = response.headers ?? {}
    this.contentType = response.contentType
    this.length = body.length
    this.precompressed = precompressed
  }

  get bytes(): Buffer {
    return this.body.bytes
  }
}

/** A response made ready to send: serialized, with its ETag when it asks for one. */
function prepare(response: EndpointResponse): PreparedAnswer {
  const { body } = response
  const spliced = body instanceof SplicedJson ? body : undefined
  const precompressed = spliced?.precompressed
  if (spliced && precompressed && !response.etag) return new PreparedPieces(response, spliced, precompressed)
  const bytes = spliced?.bytes ?? Buffer.from(response.contentType ? String(body) : toJson(body))
  return {
    status: response.status ?? 200,
    headers: response.headers ?? {},
    contentType: response.contentType,
    bytes,
    length: bytes.length,
    etag: response.etag ? contentHash(bytes) : undefined,
    // Answers spliced from kept ones (a batch's entries) are gzipped by splicing theirs; anything else is
    // compressed whole.
    splicedFrom: spliced?.splicedFrom.length ? spliced.splicedFrom : undefined,
  }
}

/** Whether a caller takes gzip, by its Accept-Encoding: clients send a handful of values, kept up to 64. */
const gzipTakenBy = new Map<string, boolean>()
const GZIP_TAKEN_KEPT = 64

/**
 * Whether the caller takes gzip over the answer as is. Asked of every request (a store reads differently for
 * it): negotiating the header anew costs about 1.6 µs, looking its verdict up a few dozen ns.
 */
function takesGzip(ctx: Context): boolean {
  const header = ctx.request.get('Accept-Encoding')
  if (header === '') return false
  let taken = gzipTakenBy.get(header)
  if (taken === undefined) {
    taken = ctx.request.acceptsEncodings('gzip', 'identity') === 'gzip'
    if (gzipTakenBy.size < GZIP_TAKEN_KEPT) gzipTakenBy.set(header, taken)
  }
  return taken
}

function render(
  ctx: Context & { state: RequestState },
  answer: PreparedAnswer,
  answers: AnswerCache,
  callerTakesGzip: boolean,
): void {
  ctx.response.status = answer.status
  for (const [name, value] of Object.entries(answer.headers)) ctx.response.set(name, value)
  setType(ctx, answer.contentType ?? ctx.state.mediaType)
  // Gzipped, here or by the compression middleware's stream (answers too large to compress at once).
  const gzipped = answer.length >= COMPRESS_THRESHOLD && callerTakesGzip
  if (answer.etag) {
    ctx.response.set('ETag', entityTag(answer.etag, gzipped))
    if (matchesIfNoneMatch(ctx.request.get('If-None-Match'), answer.etag)) {
      ctx.response.status = 304
      return
    }
  }
  // Compressed here for a caller that accepts gzip (a kept answer once for all of them, a batch's spliced
  // from its entries' forms), instead of by the compression middleware's stream.
  const gzip = gzipped ? answers.gzip(answer) : undefined
  if (gzip) {
    ctx.response.set('Content-Encoding', 'gzip')
    ctx.response.body = gzip
  } else {
    ctx.response.body = answer.bytes
  }
}

/**
 * An endpoint's answer to a request for `path` with the raw `query`, made ready to send. A GET's answer the
 * endpoint let be reused is kept under its path and query and given again while it holds. An endpoint whose
 * store-derived state is being brought up to date (`Endpoint.ready`) answers once that is done. A handler that
 * answers at once is answered at once (a batch runs its entries without a promise each).
 */
export function answerRequest(
  endpoint: Endpoint,
  path: string,
  query: string,
  invocation: Omit<Invocation, 'query'>,
  services: Services,
): PreparedAnswer | Promise<PreparedAnswer> {
  if (!endpoint.ready) return answerNow(endpoint, path, query, invocation, services)
  // Parsed once for both: what is made ready may depend on what is asked.
  const params = new URLSearchParams(query)
  const preparing = endpoint.ready(params)
  const answer = () => answerNow(endpoint, path, query, invocation, services, params)
  // Once waited for, what changed in the meantime is caught up with by the handler itself: no waiting again.
  return preparing ? preparing.then(answer) : answer()
}

function answerNow(
  endpoint: Endpoint,
  path: string,
  query: string,
  invocation: Omit<Invocation, 'query'>,
  services: Services,
  params?: URLSearchParams,
): PreparedAnswer | Promise<PreparedAnswer> {
  // Read before the handler runs: a change committed while it runs makes what it answered look old.
  const generation = services.db.changeGeneration()
  const key = endpoint.method === 'GET' ? `${path}?${query}` : undefined
  const kept = key && services.answers.get(key, generation, services.clock())
  if (kept) return kept
  const ready = (response: EndpointResponse) => {
    const answer = prepare(response)
    if (key && response.reuse) services.answers.set(key, generation, answer, response.reuse)
    return answer
  }
  const response = invokeEndpoint(
    endpoint,
    { ...invocation, query: params ?? new URLSearchParams(query), rawQuery: query },
    services,
  )
  return response instanceof Promise ? response.then(ready) : ready(response)
}

const NEVER_ABORTED = new AbortController().signal

/**
 * What a call that waits on an upstream source runs under: aborted when its caller hangs up (the upstream
 * work stops with it) and, for a lone call, when its deadline passes (504). `done` clears the timer.
 */
function callSignal(
  ctx: Context,
  endpoint: Endpoint,
  services: Services,
): { signal: AbortSignal; done(): void } {
  if (!endpoint.waits) return { signal: NEVER_ABORTED, done: () => undefined }
  const controller = new AbortController()
  const leave = () => {
    if (!ctx.res.writableFinished) controller.abort(new DOMException('The caller hung up', 'AbortError'))
  }
  ctx.res.once('close', leave)
  const timer =
    endpoint.waits === 'call'
      ? setTimeout(
          () => controller.abort(new DOMException('The call ran out of time', 'TimeoutError')),
          services.upstreamDeadlineMs,
        )
      : undefined
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer)
      ctx.res.off('close', leave)
    },
  }
}

/** Dispatches a request to its endpoint; answers 404, 405 with Allow, and OPTIONS 204 with Allow. */
export function dispatch(
  routes: Routes,
  services: Services,
  options: { bodyTimeoutMs?: number } = {},
): Middleware<RequestState> {
  return async (ctx) => {
    const resolution = routes.resolve(ctx.request.method, ctx.request.path)
    if (resolution.kind === 'not-found') throw notFound(ctx.request.path)
    if (resolution.kind === 'method-not-allowed') {
      if (ctx.request.method === 'OPTIONS') {
        ctx.response.set('Allow', resolution.allow.join(', '))
        ctx.response.status = 204
        return
      }
      throw methodNotAllowed(ctx.request.method, resolution.allow)
    }
    const { endpoint, pathParams } = resolution
    ctx.state.endpoint = endpoint
    const body = endpoint.body
      ? await readJsonBody(ctx, endpoint.body.maxBytes, options.bodyTimeoutMs)
      : undefined
    const call = callSignal(ctx, endpoint, services)
    const callerTakesGzip = takesGzip(ctx)
    try {
      // From the raw query string: ctx.URL would build a whole WHATWG URL (origin and all) per request.
      const answer = answerRequest(
        endpoint,
        ctx.request.path,
        ctx.request.querystring,
        {
          pathParams,
          body,
          owner: ctx.state.owner,
          requestId: ctx.state.requestId,
          signal: call.signal,
          takesGzip: callerTakesGzip,
        },
        services,
      )
      render(ctx, answer instanceof Promise ? await answer : answer, services.answers, callerTakesGzip)
    } finally {
      call.done()
    }
  }
}
