import { gzipSync } from 'node:zlib'
import { GZIP_OPTIONS } from './middleware/compressWhenAccepted.js'

/**
 * Answers kept for the next identical request. An endpoint opts in per response (`EndpointResponse.reuse`)
 * when its answer depends on the request's path and query and the database alone, and, for answers that
 * depend on the time, says through which moment it stays true. Popular searches (the same state and
 * service type from every visitor of a booking site) are then answered without a query or a
 * serialization, and never differently from what the store would answer: every entry is dropped as soon
 * as the database changes (src/db/changes.ts), by this process or another.
 */

/** An answer as it goes out: what `render` sends, whether it was just made or kept. */
export interface PreparedAnswer {
  status: number
  headers: Readonly<Record<string, string>>
  /** Media type when the body is not JSON; otherwise the one negotiated for each request. */
  contentType?: string
  bytes: string
  etag?: string
}

interface Kept {
  answer: PreparedAnswer
  /** Epoch ms through which the answer stays true, if the time matters. */
  through: number | undefined
  /** Given again since it was kept or last spared: spared once more when its turn to go comes. */
  used: boolean
}

/** Answers up to this size are gzipped on the event loop (kept ones once); larger ones by the middleware's stream. */
const GZIP_ONCE_MAX_CHARS = 256 * 1024

/** An answer larger than this share of the room is not kept: it would push out many smaller ones. */
const LARGEST_SHARE = 16

export class AnswerCache {
  readonly #kept = new Map<string, Kept>()
  /** Every answer ever kept, with its gzip form once made; an answer dropped since goes with its last user. */
  readonly #everKept = new WeakMap<PreparedAnswer, Buffer | undefined>()
  #generation = -1
  #chars = 0

  /** @param maxChars characters kept in all (about as many bytes of JSON); past this the oldest go. */
  constructor(private readonly maxChars: number) {}

  /** The answer kept for `key` if the database is still at `generation` and it holds at `now`. */
  get(key: string, generation: number, now: number): PreparedAnswer | undefined {
    this.#forgetIfChanged(generation)
    const kept = this.#kept.get(key)
    if (!kept) return undefined
    if (kept.through !== undefined && now > kept.through) {
      this.#drop(key, kept)
      return undefined
    }
    kept.used = true
    return kept.answer
  }

  /** Keeps an answer made while the database was at `generation`. */
  set(key: string, generation: number, answer: PreparedAnswer, through?: number): void {
    this.#forgetIfChanged(generation)
    // Made from an older state than the one now seen: it may already be wrong.
    if (generation !== this.#generation) return
    const size = answer.bytes.length + key.length
    if (size * LARGEST_SHARE > this.maxChars) return
    const previous = this.#kept.get(key)
    if (previous) this.#drop(key, previous)
    // Oldest first (Map order is insertion order), but one used since is spared and goes to the back: a
    // hit costs a flag instead of a reordering, and answers still in use outlive those that are not.
    while (this.#chars + size > this.maxChars) {
      const [oldestKey, oldest] = this.#kept.entries().next().value as [string, Kept]
      if (oldest.used) {
        oldest.used = false
        this.#kept.delete(oldestKey)
        this.#kept.set(oldestKey, oldest)
      } else {
        this.#drop(oldestKey, oldest)
      }
    }
    this.#kept.set(key, { answer, through, used: false })
    this.#everKept.set(answer, undefined)
    this.#chars += size
  }

  /**
   * The gzip form of an answer up to GZIP_ONCE_MAX_CHARS, made on the event loop: a kept answer's on first
   * use and kept with it (a popular answer is asked for with Accept-Encoding by nearly every client, and
   * compressing 15 KB again each time costs more than everything else in answering it); another's for this
   * response alone, 0.1 ms for a page of slots, where the compression middleware's stream through the thread
   * pool held the response up by milliseconds. Undefined for a larger answer, compressed as every answer is.
   */
  gzipped(answer: PreparedAnswer): Buffer | undefined {
    if (answer.bytes.length > GZIP_ONCE_MAX_CHARS) return undefined
    if (!this.#everKept.has(answer)) return gzipSync(answer.bytes, GZIP_OPTIONS)
    let bytes = this.#everKept.get(answer)
    if (!bytes) {
      bytes = gzipSync(answer.bytes, GZIP_OPTIONS)
      this.#everKept.set(answer, bytes)
    }
    return bytes
  }

  get size(): number {
    return this.#kept.size
  }

  #forgetIfChanged(generation: number): void {
    if (generation <= this.#generation) return
    this.#kept.clear()
    this.#chars = 0
    this.#generation = generation
  }

  #drop(key: string, kept: Kept): void {
    this.#kept.delete(key)
    this.#chars -= kept.answer.bytes.length + key.length
  }
}
