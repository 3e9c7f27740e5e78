import {
  type DeflatedPart,
  deflatedPart,
  type Precompressed,
  spliceableGzip,
  spliceGzip,
  spliceGzipOf,
} from './gzipSplice.js'
import { ONE_OFF_GZIP_LEVEL } from './middleware/compressWhenAccepted.js'

/**
 * Answers kept for the next identical request. An endpoint opts in per response (`EndpointResponse.reuse`)
 * when its answer depends on the request's path and query and the database alone, and, for answers that
 * depend on the time, says through which moment it stays true. Popular searches (the same state and
 * service type from every visitor of a booking site) are then answered without a query or a
 * serialization, and never differently from what the store would answer: when the database changes
 * (`Db.changeGeneration`), by this process or another, every entry is dropped but those whose endpoint can
 * tell that the change leaves them true (`stillTrue`: a slot search over publishers a sync did not touch),
 * asked when the entry is next wanted.
 */

/** An answer as it goes out: what `render` sends, whether it was just made or kept. */
export interface PreparedAnswer {
  status: number
  headers: Readonly<Record<string, string>>
  /** Media type when the body is not JSON; otherwise the one negotiated for each request. */
  contentType?: string
  /** UTF-8. Made when first read, for an answer spliced from large stored resources (see SplicedJson). */
  readonly bytes: Buffer
  /** The length of `bytes`, known without them. */
  length: number
  /** The content hash its entity tags are made from, when the endpoint asked for one. */
  etag?: string
  /** Answers whose bytes were spliced into these, each at its offset (a FHIR batch's entries). */
  splicedFrom?: readonly SplicedAnswer[]
  /** These bytes in pieces, some with their compressed data made already (large stored resources). */
  precompressed?: readonly (Buffer | Precompressed)[]
}

export interface SplicedAnswer {
  at: number
  answer: PreparedAnswer
}

/** How long a kept answer holds: through a moment, and past changes its endpoint can judge. */
export interface Reuse {
  /** Epoch ms through which the answer stays true, if the time matters. */
  through?: number
  /** Asked after the database changed: true when the answer is still what the store would answer. */
  stillTrue?: () => boolean
}

interface Kept {
  answer: PreparedAnswer
  /** Epoch ms through which the answer stays true, if the time matters. */
  through: number | undefined
  /** The database generation it is known true at. */
  generation: number
  stillTrue: (() => boolean) | undefined
  /** Given again since it was kept or last spared: spared once more when its turn to go comes. */
  used: boolean
  forms: Forms
}

/** What goes with an answer once kept, as long as someone holds the answer. */
interface Forms {
  /** Given again at least once since it was kept. */
  givenAgain: boolean
  gzip: Buffer | undefined
}

/**
 * Answers up to this size are gzipped on the event loop (kept ones once); larger ones by the compression
 * middleware's stream.
 */
const GZIP_ONCE_MAX_BYTES = 256 * 1024

/**
 * A spliced answer is gzipped from its parts' gzip forms when the rest of it (the text between them, the
 * parts not compressed alone) is at most this much, sent stored; past it, it is compressed whole as every
 * answer is (by the compression middleware, off the event loop).
 */
const SPLICED_STORED_MAX_BYTES = 16 * 1024

/** An answer larger than this share of the room is not kept: it would push out many smaller ones. */
const LARGEST_SHARE = 16

export class AnswerCache {
  readonly #kept = new Map<string, Kept>()
  /** Every answer ever kept, with its gzip form once made; an answer dropped since goes with its last user. */
  readonly #everKept = new WeakMap<PreparedAnswer, Forms>()
  #generation = -1
  #bytes = 0

  /** @param maxBytes bytes of answers kept in all; past this the oldest go. */
  constructor(private readonly maxBytes: number) {}

  /** The answer kept for `key` if the database is still at `generation` and it holds at `now`. */
  get(key: string, generation: number, now: number): PreparedAnswer | undefined {
    this.#forgetIfChanged(generation)
    const kept = this.#kept.get(key)
    if (!kept) return undefined
    if (
      (kept.through !== undefined && now > kept.through) ||
      (kept.generation !== generation && !kept.stillTrue?.())
    ) {
      this.#drop(key, kept)
      return undefined
    }
    kept.generation = generation
    kept.used = true
    kept.forms.givenAgain = true
    return kept.answer
  }

  /** Keeps an answer made while the database was at `generation`. */
  set(key: string, generation: number, answer: PreparedAnswer, reuse: Reuse = {}): void {
    this.#forgetIfChanged(generation)
    // Made from an older state than the one now seen: it may already be wrong.
    if (generation !== this.#generation) return
    const size = answer.length + key.length
    if (size * LARGEST_SHARE > this.maxBytes) return
    const previous = this.#kept.get(key)
    if (previous) this.#drop(key, previous)
    // Oldest first (Map order is insertion order), but one used since is spared and goes to the back: a
    // hit costs a flag instead of a reordering, and answers still in use outlive those that are not.
    while (this.#bytes + size > this.maxBytes) {
      const [oldestKey, oldest] = this.#kept.entries().next().value as [string, Kept]
      if (oldest.used) {
        oldest.used = false
        this.#kept.delete(oldestKey)
        this.#kept.set(oldestKey, oldest)
      } else {
        this.#drop(oldestKey, oldest)
      }
    }
    let forms = this.#everKept.get(answer)
    if (!forms) {
      forms = { givenAgain: false, gzip: undefined }
      this.#everKept.set(answer, forms)
    }
    this.#kept.set(key, {
      answer,
      through: reuse.through,
      generation,
      stillTrue: reuse.stillTrue,
      used: false,
      forms,
    })
    this.#bytes += size
  }

  /**
   * The gzip form of an answer. A kept one's is compressed on first use and kept with it: a popular answer
   * is asked for with Accept-Encoding by nearly every client, and compressing 15 KB again each time costs
   * more than everything else in answering it. An answer spliced from kept ones (a batch's) is gzipped by
   * splicing theirs (src/http/gzipSplice.ts). Any other is compressed for this response alone, 0.1 ms for
   * a page of slots, where the compression middleware's stream through the thread pool held a cold search's
   * response up by about 2 ms. Undefined for one too large to compress here, or a spliced one left whole.
   */
  gzip(answer: PreparedAnswer): Buffer | undefined {
    const forms = this.#everKept.get(answer)
    // Splicing what is compressed already beats compressing a megabyte of plans anew, kept or not.
    if (answer.precompressed && !forms?.gzip) {
      const spliced = gzipOfPieces(answer.precompressed)
      if (spliced && forms) forms.gzip = spliced
      if (spliced) return spliced
    }
    if (forms) return this.#gzipOnce(answer, forms)
    if (answer.splicedFrom) return this.#gzipSpliced(answer.bytes, answer.splicedFrom)
    return answer.length <= GZIP_ONCE_MAX_BYTES ? spliceableGzip(answer.bytes, ONE_OFF_GZIP_LEVEL) : undefined
  }

  #gzipOnce(answer: PreparedAnswer, forms: Forms): Buffer | undefined {
    if (answer.length > GZIP_ONCE_MAX_BYTES) return undefined
    forms.gzip ??= spliceableGzip(answer.bytes)
    return forms.gzip
  }

  #gzipSpliced(whole: Buffer, splicedFrom: readonly SplicedAnswer[]): Buffer | undefined {
    // A part is spliced in compressed when its form is made already, or made now if it was asked for again:
    // compressing 100 parts one by one costs twice compressing them together, so only answers likely to be
    // asked for again are worth it. The others go stored with the text around them.
    const compressed = splicedFrom.filter(({ answer }) => {
      const forms = this.#everKept.get(answer)
      return (
        forms !== undefined &&
        (forms.gzip !== undefined || forms.givenAgain) &&
        answer.length <= GZIP_ONCE_MAX_BYTES
      )
    })
    const compressedBytes = compressed.reduce((sum, { answer }) => sum + answer.length, 0)
    if (whole.length - compressedBytes > SPLICED_STORED_MAX_BYTES) return undefined
    const parts: (Buffer | DeflatedPart)[] = []
    let from = 0
    for (const { at, answer } of compressed) {
      const gzip = this.#gzipOnce(answer, this.#everKept.get(answer) as Forms) as Buffer
      parts.push(whole.subarray(from, at), deflatedPart(gzip))
      from = at + answer.length
    }
    parts.push(whole.subarray(from))
    return spliceGzip(whole, parts)
  }

  get size(): number {
    return this.#kept.size
  }

  /** On a change, the answers no endpoint can judge go at once; the others are judged when next wanted. */
  #forgetIfChanged(generation: number): void {
    if (generation <= this.#generation) return
    for (const [key, kept] of this.#kept) if (!kept.stillTrue) this.#drop(key, kept)
    this.#generation = generation
  }

  #drop(key: string, kept: Kept): void {
    this.#kept.delete(key)
    this.#bytes -= kept.answer.length + key.length
  }
}

/**
 * The gzip form of an answer in pieces, some precompressed, spliced from them when what goes stored (the
 * text between them, resources too small to keep compressed) is at most SPLICED_STORED_MAX_BYTES.
 */
function gzipOfPieces(pieces: readonly (Buffer | Precompressed)[]): Buffer | undefined {
  let storedBytes = 0
  for (const piece of pieces) if (Buffer.isBuffer(piece)) storedBytes += piece.length
  return storedBytes > SPLICED_STORED_MAX_BYTES ? undefined : spliceGzipOf(pieces)
}
