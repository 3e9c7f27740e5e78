import { STATUS_CODES } from 'node:http'
import type { KeyOwner } from '../accounts/keys.js'
import type { Services } from '../api/endpoint.js'
import type { PreparedAnswer } from '../http/answerCache.js'
import { isStoreUnavailable } from '../db/open.js'
import { ApiError, FHIR_BASE, operationOutcome, toApiError } from '../http/errors.js'
import { SplicedJson } from '../http/json.js'
import { storeUnavailable } from '../http/middleware/renderErrors.js'
import { answerRequest, methodNotAllowed, notFound } from '../http/routes.js'

export const BATCH_MAX_ENTRIES = 100
export const BATCH_MAX_BYTES = 1024 * 1024
export const BATCH_BUDGET_MS = 60_000

interface BatchEntry {
  request?: { method?: unknown; url?: unknown }
  resource?: unknown
}

const invalidBundle = (message: string, code = 'invalid') =>
  ApiError.invalid([{ path: ['Bundle'], message, fhirCode: code }], message)

/** Checks the envelope; entries are checked one by one, each failing alone. */
function readBundle(body: unknown): BatchEntry[] {
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
  return entries as BatchEntry[]
}

/** An entry's answer: the same request's answer alone, or what refused it before any endpoint ran. */
type EntryResult = { status: number; answer: PreparedAnswer } | { status: number; resource: unknown }

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`.trim()

/** What follows an entry's resource, by status. */
const entryEnds = new Map<number, string>()
const entryEnd = (status: number) => {
  let end = entryEnds.get(status)
  if (end === undefined) {
    end = `,"response":{"status":${JSON.stringify(statusLine(status))}}}`
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

const ENTRY_BASE = `http://base${FHIR_BASE}/`
/** Resolved entry paths kept; past this the oldest is forgotten. */
const REMEMBERED_PATHS = 1024
/** Where an entry's path ends, or a character the URL parser strips or encodes. */
const PATH_END = /[?#\x00-\x20\x7f]/
const STRIPPED = /[\x00-\x20\x7f]/

/** Why every entry with a path is refused before any endpoint is asked, whatever its method and query. */
type PathRefusal = 'reconcile' | 'outside' | 'nested' | undefined

interface EntryPath {
  host: string
  pathname: string
  refusal: PathRefusal
}

const resolvedPaths = new Map<string, EntryPath>()

function entryPath(host: string, pathname: string): EntryPath {
  let refusal: PathRefusal
  if (pathname.includes('$reconcile-medications')) refusal = 'reconcile'
  else if (host !== 'base' || !(pathname === FHIR_BASE || pathname.startsWith(`${FHIR_BASE}/`)))
    refusal = 'outside'
  else if (pathname === FHIR_BASE || pathname === `${FHIR_BASE}/`) refusal = 'nested'
  return { host, pathname, refusal }
}

/**
 * An entry's URL, resolved against the base like any relative URL. Entries of one batch mostly name the
 * same path with different queries, so the path is resolved once per text and the query read on its own:
 * that gives the parameters the whole URL's searchParams would, as long as the URL has no spaces or control
 * characters (which the URL parser strips or encodes); such a URL is parsed whole.
 */
export function entryTarget(url: string): EntryPath & { query: string } {
  const relative = url.charCodeAt(0) === 0x2f ? url.replace(/^\/+/, '') : url
  const end = relative.search(PATH_END)
  const stop = end === -1 ? '' : relative[end]
  const rest = end === -1 ? '' : relative.slice(end + 1)
  if ((stop !== '' && stop !== '?' && stop !== '#') || STRIPPED.test(rest)) {
    const whole = new URL(relative, ENTRY_BASE)
    return { ...entryPath(whole.host, whole.pathname), query: whole.search.slice(1) }
  }
  const path = end === -1 ? relative : relative.slice(0, end)
  let resolved = resolvedPaths.get(path)
  if (!resolved) {
    const { host, pathname } = new URL(path, ENTRY_BASE)
    resolved = entryPath(host, pathname)
    if (resolvedPaths.size >= REMEMBERED_PATHS)
      resolvedPaths.delete(resolvedPaths.keys().next().value as string)
    resolvedPaths.set(path, resolved)
  }
  const hash = stop === '?' ? rest.indexOf('#') : -1
  const query = stop !== '?' ? '' : hash === -1 ? rest : rest.slice(0, hash)
  return { host: resolved.host, pathname: resolved.pathname, refusal: resolved.refusal, query }
}

/** An entry's result, as soon as it is known: most endpoints answer without waiting on anything. */
function runEntry(
  entry: BatchEntry,
  services: Services,
  context: { owner: KeyOwner | undefined; requestId: string; signal: AbortSignal },
): EntryResult | Promise<EntryResult> {
  const method = entry.request?.method
  const url = entry.request?.url
  if (typeof method !== 'string' || typeof url !== 'string' || url === '') {
    return entryFailure(400, 'Each entry needs request.method and a request.url relative to the base')
  }
  const target = entryTarget(url)
  if (target.refusal === 'reconcile') {
    return entryFailure(
      400,
      '$reconcile-medications is not allowed inside a batch; call it on its own',
      'not-supported',
    )
  }
  if (target.refusal === 'outside') return failure(notFound(url))
  if (target.refusal === 'nested') {
    return entryFailure(400, 'A batch cannot contain another batch', 'not-supported')
  }
  const resolution = services.routes.resolve(method.toUpperCase(), target.pathname)
  if (resolution.kind === 'not-found') return failure(notFound(target.pathname))
  if (resolution.kind === 'method-not-allowed') return failure(methodNotAllowed(method, resolution.allow))
  try {
    const { endpoint } = resolution
    // Under the path and query a lone request has: the two share the answers kept.
    const answer = answerRequest(
      endpoint,
      target.pathname,
      target.query,
      {
        pathParams: resolution.pathParams,
        body: endpoint.body ? entry.resource : undefined,
        ...context,
      },
      services,
    )
    return answer instanceof Promise ? answer.then(answered, refused) : answered(answer)
  } catch (error) {
    return refused(error)
  }
}

const answered = (answer: PreparedAnswer): EntryResult => ({ status: answer.status, answer })

const refused = (error: unknown): EntryResult =>
  failure(isStoreUnavailable(error) ? storeUnavailable() : toApiError(error))

/**
 * Runs each entry in order through the same endpoint declarations as a lone request, independently.
 * Entries still running when the budget ends answer 504 inside the 200.
 */
export async function runBatch(
  body: unknown,
  services: Services,
  context: { owner: KeyOwner | undefined; requestId: string },
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
  const entryContext = { ...context, signal: deadline.signal }
  const results: EntryResult[] = []
  try {
    for (const entry of entries) {
      const result = runEntry(entry, services, entryContext)
      results.push(result instanceof Promise ? await Promise.race([result, expired]) : result)
    }
  } finally {
    clearTimeout(timer)
  }
  // Spliced from each entry's bytes: an answer alone is serialized already, and a kept one gzipped once.
  const pieces: (string | PreparedAnswer)[] = []
  let text = '{"resourceType":"Bundle","type":"batch-response","entry":['
  for (const [index, result] of results.entries()) {
    text += index === 0 ? '{"resource":' : ',{"resource":'
    if ('answer' in result) {
      pieces.push(text, result.answer)
      text = ''
    } else {
      text += JSON.stringify(result.resource)
    }
    text += entryEnd(result.status)
  }
  pieces.push(`${text}]}`)
  return new SplicedJson(pieces)
}
