import { setTimeout as wait } from 'node:timers/promises'
import { type Dispatcher, request } from 'undici'
import { type Config, settingOf } from '../config.js'
import { ApiError } from '../http/errors.js'
import { parseJsonRecord } from '../ingest/json.js'
import { describeMb } from '../ingest/limits.js'
import { UPSTREAM_MAX_ANSWER_MB } from './settings.js'

/**
 * What a source said when it did answer: a 2xx, a 404/410 (the record does not exist there), or a 304 to a
 * conditional request (no body).
 */
export interface UpstreamAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
  /** The body's bytes as the source sent them (empty for a 304). */
  bytes: Buffer
}

export interface UpstreamRequest {
  method?: 'GET' | 'POST'
  /** Relative to the source's base (`CodeSystem/$lookup?…`), or an absolute URL under it. */
  path: string
  /** Sent as JSON. */
  body?: unknown
  /** Headers of this request (validators of a conditional GET). */
  headers?: Record<string, string>
  /** The caller's budget (e.g. a batch's 60 s); when it runs out the answer is 504. */
  signal?: AbortSignal
}

export interface UpstreamOptions {
  /**
   * Base URL of the remote FHIR server, as the operator configured it. Credentials in it (`user:pass@`) are
   * sent as HTTP Basic and never shown; every URL requested must lie under it.
   */
  baseUrl: string
  /** Names the source to callers by what it serves, never by its address: `the remote directory`. */
  name: string
  /** Per attempt. */
  timeoutMs?: number
  /** The short wait before the one retry, when the source named no time of its own. */
  retryDelayMs?: number
  /** A source asking to wait longer than this is not retried: the caller is told to come back later. */
  maxRetryAfterMs?: number
  /** An answer larger than this is cut off as it passes it: 502, and never held whole. */
  maxAnswerBytes?: number
  headers?: Record<string, string>
  dispatcher?: Dispatcher
  /** Injected in tests so that retries and Retry-After waits cost no wall time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  now?: () => number
  /** The operator's log: each failure with the source's address and its cause (never its credentials). */
  log?: (line: string) => void
}

/** What deployments and tests may adjust on every source client (timeouts, retry waits). */
export type UpstreamTuning = Pick<
  UpstreamOptions,
  'timeoutMs' | 'retryDelayMs' | 'sleep' | 'maxAnswerBytes' | 'log'
>

/** What every source client is built with, as configured. */
export function upstreamTuning(config: Config): UpstreamTuning {
  return { maxAnswerBytes: (settingOf(config, UPSTREAM_MAX_ANSWER_MB) ?? 32) * 1024 * 1024 }
}

type Failure =
  | { kind: 'throttled'; retryAfterMs: number | undefined }
  | { kind: 'timeout' }
  | { kind: 'failed'; detail: string; transient: boolean }

type Attempt =
  | { ok: true; answer: UpstreamAnswer }
  | { ok: false; failure: Failure }
  | { ok: 'redirect'; location: string }

const ANSWER_STATUSES = new Set([404, 410])
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Redirects followed for one attempt, each within the source (resolve()). */
const MAX_REDIRECTS = 5
/** Statuses a second try can change; any other refusal is final and answered 502 at once. */
const TRANSIENT_STATUSES = new Set([408, 500, 502, 503, 504])
/** The shortest `Retry-After` we hand our own caller for a throttling source, as the spec's 503 row says. */
const MIN_THROTTLED_RETRY_AFTER_S = 2

/**
 * A remote FHIR server as a source of answers, with the spec's upstream rules in one place: one retry after a
 * short wait (or after the source's own `Retry-After` when that is 5 s or less), then 502 for a refusal, a
 * failure or an unreadable answer, 503 `throttled` with `Retry-After` for rate limiting, 504 for no answer in
 * time. It never turns a failure into an empty answer: it either returns what the source said or throws.
 */
export class UpstreamSource {
  /** The base without credentials, ending in `/`: every URL requested lies under it. */
  readonly #base: URL
  readonly #options: Required<Omit<UpstreamOptions, 'dispatcher' | 'headers'>> &
    Pick<UpstreamOptions, 'dispatcher' | 'headers'>

  constructor(options: UpstreamOptions) {
    const configured = new URL(`${options.baseUrl.replace(/\/+$/, '')}/`)
    const basic =
      configured.username || configured.password
        ? `Basic ${Buffer.from(`${decodeURIComponent(configured.username)}:${decodeURIComponent(configured.password)}`).toString('base64')}`
        : undefined
    configured.username = ''
    configured.password = ''
    configured.search = ''
    configured.hash = ''
    this.#base = configured
    this.#options = {
      timeoutMs: 10_000,
      retryDelayMs: 250,
      maxRetryAfterMs: 5_000,
      maxAnswerBytes: 32 * 1024 * 1024,
      sleep: (ms, signal) => wait(ms, undefined, { signal }),
      now: Date.now,
      log: (line) => console.error(line),
      ...options,
      headers: { ...(basic ? { authorization: basic } : {}), ...options.headers },
    }
  }

  /**
   * The absolute URL of a path on this source. Anything that leaves the base (another origin, a path outside
   * its prefix, a link the source handed us pointing elsewhere on its host) is refused with 502 and never
   * requested.
   */
  resolve(path: string): URL {
    let url: URL
    try {
      url = new URL(path, this.#base)
    } catch {
      throw new ApiError(502, { detail: `${this.#options.name} sent a link that is not a URL.` })
    }
    if (url.origin !== this.#base.origin || !url.pathname.startsWith(this.#base.pathname) || url.username) {
      throw new ApiError(502, { detail: `${this.#options.name} sent a link outside itself.` })
    }
    return url
  }

  /** What the source is called in what callers are told. */
  get name(): string {
    return this.#options.name
  }

  /** A URL under the base as a path relative to it, to keep (in a cursor) without the source's address. */
  relative(url: URL): string {
    return url.href.slice(this.#base.href.length)
  }

  async fetchJson(call: UpstreamRequest): Promise<UpstreamAnswer> {
    const url = this.resolve(call.path)
    const first = await this.#following(url, call)
    if (first.ok) return first.answer
    const delay = this.#retryDelay(first.failure)
    if (delay === undefined) throw this.#toError(first.failure)
    try {
      await this.#options.sleep(delay, call.signal)
    } catch {
      throw this.#outOfTime()
    }
    const second = await this.#following(url, call)
    if (second.ok) return second.answer
    throw this.#toError(second.failure)
  }

  /** One attempt, its redirects followed while they stay within the source (anything else is a 502). */
  async #following(url: URL, call: UpstreamRequest): Promise<Exclude<Attempt, { ok: 'redirect' }>> {
    let current = url
    for (let hops = 0; ; hops++) {
      const attempt = await this.#attempt(current, call)
      if (attempt.ok !== 'redirect') return attempt
      if (hops === MAX_REDIRECTS)
        throw new ApiError(502, {
          detail: `${this.#options.name} redirected more than ${MAX_REDIRECTS} times.`,
        })
      current = this.resolve(new URL(attempt.location, current).href)
    }
  }

  #retryDelay(failure: Failure): number | undefined {
    if (failure.kind === 'throttled') {
      const asked = failure.retryAfterMs ?? this.#options.retryDelayMs
      return asked <= this.#options.maxRetryAfterMs ? asked : undefined
    }
    if (failure.kind === 'failed' && !failure.transient) return undefined
    return this.#options.retryDelayMs
  }

  async #attempt(url: URL, call: UpstreamRequest): Promise<Attempt> {
    if (call.signal?.aborted) throw this.#outOfTime()
    const timeout = AbortSignal.timeout(this.#options.timeoutMs)
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout
    const hasBody = call.body !== undefined
    try {
      const response = await request(url, {
        method: call.method ?? (hasBody ? 'POST' : 'GET'),
        headers: {
          accept: 'application/fhir+json',
          ...(hasBody ? { 'content-type': 'application/fhir+json' } : {}),
          ...call.headers,
          ...this.#options.headers,
        },
        body: hasBody ? JSON.stringify(call.body) : undefined,
        signal,
        dispatcher: this.#options.dispatcher,
      })
      const { statusCode: status, headers } = response
      if (status === 429 || (status === 503 && headers['retry-after'] !== undefined)) {
        await response.body.dump()
        return { ok: false, failure: { kind: 'throttled', retryAfterMs: this.#retryAfterMs(headers) } }
      }
      const location = headers.location
      if (REDIRECT_STATUSES.has(status) && typeof location === 'string') {
        await response.body.dump()
        return { ok: 'redirect', location }
      }
      if (status === 304) {
        await response.body.dump()
        return { ok: true, answer: { status, headers, body: undefined, bytes: Buffer.alloc(0) } }
      }
      if (!(status >= 200 && status < 300) && !ANSWER_STATUSES.has(status)) {
        await response.body.dump()
        return {
          ok: false,
          failure: {
            kind: 'failed',
            detail: `${this.#options.name} answered ${status}.`,
            transient: TRANSIENT_STATUSES.has(status),
          },
        }
      }
      const bytes = await this.#readAnswer(response.body)
      if (bytes === undefined) {
        const limit = describeMb(this.#options.maxAnswerBytes, 'SVC_UPSTREAM_MAX_ANSWER_MB')
        return {
          ok: false,
          failure: {
            kind: 'failed',
            detail: `${this.#options.name} answered more than ${limit}, the limit of one answer.`,
            transient: false,
          },
        }
      }
      const record = parseJsonRecord(bytes)
      // A "not here" is an answer whatever its body says (often an HTML page).
      if ('problem' in record && ANSWER_STATUSES.has(status))
        return { ok: true, answer: { status, headers, body: undefined, bytes } }
      if ('problem' in record) {
        return {
          ok: false,
          failure: {
            kind: 'failed',
            detail: `${this.#options.name} answered unreadably (${record.problem.replace(/ \(.*\)$/, '')}).`,
            transient: !record.problem.startsWith('nested'),
          },
        }
      }
      return { ok: true, answer: { status, headers, body: record.value, bytes } }
    } catch (error) {
      if (call.signal?.aborted) throw this.#outOfTime()
      if (timeout.aborted) return { ok: false, failure: { kind: 'timeout' } }
      // The cause names the address and port: it is the operator's to read, not the caller's.
      this.#log(`could not be reached: ${(error as Error).message || 'connection failed'}`)
      return {
        ok: false,
        failure: { kind: 'failed', detail: `${this.#options.name} could not be reached.`, transient: true },
      }
    }
  }

  /** The answer's bytes, or undefined (the body destroyed) as soon as they pass the limit. */
  async #readAnswer(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer | undefined> {
    const chunks: Buffer[] = []
    let length = 0
    for await (const chunk of body) {
      length += chunk.length
      if (length > this.#options.maxAnswerBytes) {
        body.destroy()
        return undefined
      }
      chunks.push(chunk)
    }
    return Buffer.concat(chunks)
  }

  /** A line of the operator's log, naming the source by its address without credentials. */
  #log(message: string): void {
    this.#options.log(`upstream ${this.#options.name} (${this.#base.href}): ${message}`)
  }

  /** Delta-seconds or an HTTP date; anything else is treated as unstated. */
  #retryAfterMs(headers: UpstreamAnswer['headers']): number | undefined {
    const raw = headers['retry-after']
    const value = Array.isArray(raw) ? raw[0] : raw
    if (value === undefined) return undefined
    if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
    const date = Date.parse(value)
    return Number.isNaN(date) ? undefined : Math.max(0, date - this.#options.now())
  }

  #outOfTime(): ApiError {
    return new ApiError(504, { detail: `${this.#options.name} did not answer in time.` })
  }

  #toError(failure: Failure): ApiError {
    switch (failure.kind) {
      case 'throttled': {
        const seconds = Math.max(MIN_THROTTLED_RETRY_AFTER_S, Math.ceil((failure.retryAfterMs ?? 0) / 1000))
        return new ApiError(503, {
          detail: `${this.#options.name} is limiting requests; retry after ${seconds} seconds.`,
          fhirCode: 'throttled',
          headers: { 'Retry-After': String(seconds) },
        })
      }
      case 'timeout':
        return new ApiError(504, {
          detail: `${this.#options.name} did not answer within ${this.#options.timeoutMs} ms, twice.`,
        })
      case 'failed':
        return new ApiError(502, { detail: failure.detail })
    }
  }
}
