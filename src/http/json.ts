import type { PreparedAnswer, SplicedAnswer } from './answerCache.js'
import type { KeptText, Precompressed } from './gzipSplice.js'
import { stringify } from '../rawJson.js'

/**
 * Response bodies as JSON text. Serializing is a large share of answering (a batch of 100 lookups is about
 * 100 KB), so bodies that never change are serialized once, and a batch's response is spliced together
 * from its entries' bytes.
 */

/** Texts of bodies made immutable by `keepWhole`, by the body. */
const texts = new WeakMap<object, string>()

/** A piece of a SplicedJson answer. */
type Piece = string | Buffer | KeptText | PreparedAnswer

const isKept = (piece: Piece): piece is KeptText => typeof piece === 'object' && 'kept' in piece
const isAnswer = (piece: Piece): piece is PreparedAnswer => typeof piece === 'object' && 'status' in piece

/**
 * A body serialized already, as UTF-8 spliced from texts, stored resources' bytes and prepared answers'
 * bytes (a batch's entries), sent as is. `toJSON` keeps it correct anywhere it is serialized again.
 */
export class SplicedJson {
  #bytes: Buffer | undefined
  /** Its pieces, as bytes or kept compressed, until `bytes` is first wanted (see `precompressed`). */
  #pieces: readonly (Buffer | KeptText)[] | undefined
  readonly length: number
  /** Where each answer spliced in lies in `bytes`: their kept gzip forms splice the same way. */
  readonly splicedFrom: SplicedAnswer[] = []
  /**
   * Its bytes in pieces, in order, when some come with their compressed data (large stored resources) and
   * none is an answer: its gzip form is spliced from them, and its bytes are put together (and those
   * pieces' read) only if it is sent as is.
   */
  readonly precompressed: readonly (Buffer | Precompressed)[] | undefined

  constructor(pieces: readonly Piece[]) {
    // A resource as stored is sent as it was read: copying 100 KB costs more than the rest of a read.
    const [only] = pieces
    if (pieces.length === 1 && Buffer.isBuffer(only)) {
      this.#bytes = only
      this.length = only.length
      this.precompressed = undefined
      return
    }
    if (pieces.some(isKept) && !pieces.some(isAnswer)) {
      this.#pieces = pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)) as (
        Buffer | KeptText
      )[]
      this.precompressed = this.#pieces.map((piece) => (Buffer.isBuffer(piece) ? piece : piece.kept))
      this.length = this.precompressed.reduce((sum, piece) => sum + piece.length, 0)
      return
    }
    let length = 0
    for (const piece of pieces)
      length +=
        typeof piece === 'string'
          ? Buffer.byteLength(piece)
          : Buffer.isBuffer(piece)
            ? piece.length
            : piece.bytes.length
    this.length = length
    this.#bytes = Buffer.allocUnsafe(length)
    let at = 0
    for (const piece of pieces) {
      if (typeof piece === 'string') at += this.#bytes.write(piece, at)
      else {
        if (isAnswer(piece)) this.splicedFrom.push({ at, answer: piece })
        at += (Buffer.isBuffer(piece) ? piece : piece.bytes).copy(this.#bytes, at)
      }
    }
    this.precompressed = undefined
  }

  get bytes(): Buffer {
    if (this.#bytes === undefined) {
      const pieces = this.#pieces as readonly (Buffer | KeptText)[]
      const [only] = pieces
      // A lone resource is sent as read, as above.
      this.#bytes =
        pieces.length === 1 && only !== undefined && !Buffer.isBuffer(only)
          ? only.bytes
          : Buffer.concat(
              pieces.map((piece) => (Buffer.isBuffer(piece) ? piece : piece.bytes)),
              this.length,
            )
      this.#pieces = undefined
    }
    return this.#bytes
  }

  toJSON(): unknown {
    return JSON.parse(this.bytes.toString())
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  for (const inner of Object.values(value)) deepFreeze(inner)
  Object.freeze(value)
}

/**
 * Makes a body that is kept and answered again (a remembered answer) immutable, every level of it, and
 * serializes it once: whoever is handed it later can neither change it nor need to serialize it again.
 */
export function keepWhole<T extends object>(body: T): T {
  deepFreeze(body)
  texts.set(body, stringify(body))
  return body
}

/** The JSON text of a response body. */
export function toJson(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const text = texts.get(body)
    if (text !== undefined) return text
  }
  return stringify(body)
}
