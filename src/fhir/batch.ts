import { STATUS_CODES } from 'node:http'
import type { KeyOwner } from '../accounts/keys.js'
import type { Services } from '../api/endpoint.js'
import type { PreparedAnswer } from '../http/answerCache.js'
import { ApiError, FHIR_BASE, operationOutcome } from '../http/errors.js'
import { SplicedJson } from '../http/json.js'
import { formatMediaType, formatOf } from '../http/middleware/negotiate.js'
import { answerToThrown } from '../http/middleware/renderErrors.js'
import { pathBase } from '../http/pathBase.js'
import { answerRequest, methodNotAllowed, notFound } from '../http/routes.js'

export const BATCH_MAX_ENTRIES = 100
export const BATCH_MAX_BYTES = 1024 * 1024
export const BATCH_BUDGET_MS = 60_000

const invalidBundle = (message: string, code = 'invalid') =>
  ApiError.invalid([{ path: ['Bundle'], message, fhirCode: code }], message)

/** Checks the envelope; entries are checked one by one, each failing alone. */
function readBundle(body: unknown): unknown[] {
  const bundle = body as { resourceType?: unknown; type?: unknown; entry?: unknown }
  if (typeof bundle !== 'object' || bundle === null || bundle.resourceType !== 'Bundle') {
    throw invalidBundle('The body must be a Bundle resource')
  }
  if (bundle.type === 'transaction') {
    throw invalidBundle(
      'Transaction bundles are not accepted: nothing on this base writes; send type "batch"',
      'not-supported',
    )
  }
  if (bundle.type !== 'batch') throw invalidBundle('Bundle.type must be "batch"')
  const entries = bundle.entry ?? []
  if (!Array.isArray(entries)) throw invalidBundle('Bundle.entry must be an array')
  if (entries.length > BATCH_MAX_ENTRIES) {
    throw invalidBundle(
      `A batch holds at most ${BATCH_MAX_ENTRIES} entries (got ${entries.length})`,
      'too-long',
    )
  }
  return entries
}

/**
 * An entry's answer: the same request's answer alone, what refused it before any endpoint ran, or a bare
 * status (an OPTIONS or HEAD entry, whose answer alone has no body).
 */
type EntryResult =
  { status: number; answer: PreparedAnswer } | { status: number; resource: unknown } | { status: number }

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`.trim()

/** What follows an entry's resource, by status. */
const entryEnds = new Map<number, string>()
const entryEnd = (status: number) => {
  let end = entryEnds.get(status)
  if (end === undefined) {
    end = `"response":{"status":${JSON.stringify(statusLine(status))}}}`
    entryEnds.set(status, end)
  }
  return end
}

function failure(error: ApiError): EntryResult {
  // Entries have no headers: a throttled source answers 503 and the caller retries after 2 seconds.
  const status = error.status === 429 ? 503 : error.status
  return { status, resource: operationOutcome(error) }
}

function entryFailure(status: 400 | 504, message: string, code?: string): EntryResult {
  return failure(new ApiError(status, { detail: message, fhirCode: code }))
}

/** Characters no request line can carry: an entry URL holding one could not be sent alone either. */
const UNSENDABLE = /[\x00-\x20\x7f]/

/** Whether `url` is `base` itself, or under it (a path or a query follows). */
const isUnder = (url: string, base: string) =>
  url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`)

/**
 * Where an entry's URL points, as a lone request to the same URL would see it: the path as written under
 * the base (not resolved: a lone request's path is matched as sent), and the raw query. An absolute URL
 * must be under this service's FHIR base; a path written from the root that names the base
 * (`/v1/fhir/r4/metadata`) is read as that path, other leading slashes as relative to the base. Undefined
 * when it points off the base.
 */
export function entryTarget(url: string, baseUrl: string): { path: string; query: string } | undefined {
  let relative = url
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    const base = `${baseUrl}${FHIR_BASE}`
    if (!isUnder(url, base)) return undefined
    relative = url.slice(base.length)
  } else if (isUnder(url, FHIR_BASE)) relative = url.slice(FHIR_BASE.length)
  const hash = relative.indexOf('#')
  if (hash !== -1) relative = relative.slice(0, hash)
  const question = relative.indexOf('?')
  const written = question === -1 ? relative : relative.slice(0, question)
  const query = question === -1 ? '' : relative.slice(question + 1)
  const path = `${FHIR_BASE}/${written.replace(/^\/+/, '')}`
  return pathBase(path) === 'fhir' ? { path, query } : undefined
}

/**
 * An entry's result, as soon as it is known: most endpoints answer without waiting on anything. The entry
 * goes through the checks a lone request meets, in the same order (its key and plan are the batch's):
 * negotiation of `_format`, routing (404, 405, OPTIONS), whether the endpoint may run in a batch, then the
 * endpoint itself.
 */
function runEntry(
  entry: unknown,
  services: Services,
  context: { owner: KeyOwner | undefined; requestId: string; signal: AbortSignal },
): EntryResult | Promise<EntryResult> {
  const request =
    typeof entry === 'object' && entry !== null ? (entry as { request?: unknown }).request : undefined
  const { method, url } = (typeof request === 'object' && request !== null ? request : {}) as {
    method?: unknown
    url?: unknown
  }
  if (typeof method !== 'string' || typeof url !== 'string' || url === '') {
    return entryFailure(400, 'Each entry needs request.method and a request.url relative to the base')
  }
  if (UNSENDABLE.test(url)) {
    return entryFailure(400, 'request.url holds a space or a control character; percent-encode it')
  }
  const target = entryTarget(url, services.config.baseUrl)
  if (!target) return failure(notFound(url))
  if (target.path.includes('$reconcile-medications')) {
    return entryFailure(
      400,
      '$reconcile-medications is not allowed inside a batch; call it on its own',
      'not-supported',
    )
  }
  try {
    const format = formatOf(target.query)
    if (format !== null) formatMediaType(format)
    const verb = method.toUpperCase()
    const resolution = services.routes.resolve(verb, target.path)
    if (resolution.kind === 'not-found') return failure(notFound(target.path))
    if (resolution.kind === 'method-not-allowed') {
      return verb === 'OPTIONS' ? { status: 204 } : failure(methodNotAllowed(method, resolution.allow))
    }
    const { endpoint } = resolution
    if (endpoint.notInBatch) return entryFailure(400, endpoint.notInBatch, 'not-supported')
    // Under the path and query a lone request has: the two share the answers kept.
    const answer = answerRequest(
      endpoint,
      target.path,
      target.query,
      {
        pathParams: resolution.pathParams,
        body: endpoint.body ? (entry as { resource?: unknown }).resource : undefined,
        ...context,
      },
      services,
    )
    const done = verb === 'HEAD' ? headOnly : answered
    return answer instanceof Promise ? answer.then(done, (error) => refused(error, services)) : done(answer)
  } catch (error) {
    return refused(error, services)
  }
}

const answered = (answer: PreparedAnswer): EntryResult => ({ status: answer.status, answer })
const headOnly = (answer: PreparedAnswer): EntryResult => ({ status: answer.status })

/** An entry failed by its endpoint, answered as a lone request would be. */
const refused = (error: unknown, services: Services): EntryResult =>
  failure(answerToThrown(error, services.reportFault))

/**
 * Entries that wait (on a remote source) run this many at a time, so that one slow entry does not hold up
 * the others, and one batch does not open a hundred upstream requests at once.
 */
export const BATCH_CONCURRENT_ENTRIES = 4

/**
 * Runs every entry through the same endpoint declarations as a lone request, independently: entries that
 * answer at once in order, entries that wait side by side (at most BATCH_CONCURRENT_ENTRIES at a time),
 * each with the batch's whole budget. Entries still running when the budget ends answer 504 inside the 200.
 */
export async function runBatch(
  body: unknown,
  services: Services,
  context: { owner: KeyOwner | undefined; requestId: string; signal?: AbortSignal },
  budgetMs: number,
): Promise<SplicedJson> {
  const entries = readBundle(body)
  // A timer of our own, cleared when the batch is done: AbortSignal.timeout's cannot be, and would hold
  // the batch's promises (every entry's race) in memory for the whole budget after the answer went out.
  const deadline = new AbortController()
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The batch budget ran out', 'TimeoutError')),
    budgetMs,
  )
  const expired = new Promise<EntryResult>((resolve) => {
    deadline.signal.addEventListener(
      'abort',
      () =>
        resolve(
          entryFailure(
            504,
            `The batch's ${budgetMs / 1000} s budget ran out before this entry finished`,
            'timeout',
          ),
        ),
      { once: true },
    )
  })
  const signal = context.signal ? AbortSignal.any([deadline.signal, context.signal]) : deadline.signal
  const entryContext = { owner: context.owner, requestId: context.requestId, signal }
  const results: EntryResult[] = new Array(entries.length)
  const waiting = new Set<Promise<void>>()
  try {
    for (const [index, entry] of entries.entries()) {
      if (deadline.signal.aborted) {
        results[index] = await expired
        continue
      }
      const result = runEntry(entry, services, entryContext)
      if (!(result instanceof Promise)) {
        results[index] = result
        continue
      }
      const settled: Promise<void> = Promise.race([result, expired]).then((done) => {
        results[index] = done
        waiting.delete(settled)
      })
      waiting.add(settled)
      if (waiting.size >= BATCH_CONCURRENT_ENTRIES) await Promise.race(waiting)
    }
    await Promise.all(waiting)
  } finally {
    clearTimeout(timer)
  }
  // Spliced from each entry's bytes: an answer alone is serialized already, and a kept one gzipped once.
  const pieces: (string | PreparedAnswer)[] = []
  let text = '{"resourceType":"Bundle","type":"batch-response","entry":['
  for (const [index, result] of results.entries()) {
    text += index === 0 ? '{' : ',{'
    if ('answer' in result) {
      pieces.push(`${text}"resource":`, result.answer)
      text = ','
    } else if ('resource' in result) {
      text += `"resource":${JSON.stringify(result.resource)},`
    }
    text += entryEnd(result.status)
  }
  pieces.push(`${text}]}`)
  return new SplicedJson(pieces)
}
