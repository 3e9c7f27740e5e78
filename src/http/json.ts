import type { PreparedAnswer, SplicedAnswer } from './answerCache.js'
import type { Precompressed } from './gzipSplice.js'

/**
 * Response bodies as JSON text. Serializing is a large share of answering (a batch of 100 lookups is about
 * 100 KB), so bodies that never change are serialized once, and a batch's response is spliced together
 * from its entries' bytes.
 */

/** Texts of bodies made immutable by `keepWhole`, by the body. */
const texts = new WeakMap<object, string>()

/**
 * A body serialized already, as UTF-8 spliced from texts, stored resources' bytes and prepared answers'
 * bytes (a batch's entries), sent as is. `toJSON` keeps it correct anywhere it is serialized again.
 */
export class SplicedJson {
  readonly bytes: Buffer
  /** Where each answer spliced in lies in `bytes`: their kept gzip forms splice the same way. */
  readonly splicedFrom: SplicedAnswer[] = []
  /**
   * `bytes` in pieces, in order, when some come with their compressed data (large stored resources) and
   * none is an answer: its gzip form is spliced from them, without reading those pieces again.
   */
  readonly precompressed: readonly (Buffer | Precompressed)[] | undefined

  /**
   * Pieces: JSON text, JSON bytes (a resource as stored), such bytes with their compressed data, or a
   * prepared answer's bytes.
   */
  constructor(pieces: readonly (string | Buffer | Precompressed | PreparedAnswer)[]) {
    // A resource as stored is sent as it was read: copying 100 KB costs more than the rest of a read.
    const [only] = pieces
    if (pieces.length === 1 && only !== undefined && typeof only !== 'string' && !('status' in only)) {
      this.bytes = Buffer.isBuffer(only) ? only : only.bytes
      this.precompressed = Buffer.isBuffer(only) ? undefined : [only]
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
    this.bytes = Buffer.allocUnsafe(length)
    // Kept in pieces only for a page of stored resources some of which come compressed (a batch never is).
    const inPieces: (Buffer | Precompressed)[] | undefined = pieces.some(
      (piece) => typeof piece === 'object' && 'deflated' in piece,
    )
      ? []
      : undefined
    let at = 0
    for (const piece of pieces) {
      const from = at
      if (typeof piece === 'string') at += this.bytes.write(piece, at)
      else if (Buffer.isBuffer(piece)) at += piece.copy(this.bytes, at)
      else {
        if ('status' in piece) this.splicedFrom.push({ at, answer: piece })
        at += piece.bytes.copy(this.bytes, at)
      }
      inPieces?.push(typeof piece === 'object' && 'deflated' in piece ? piece : this.bytes.subarray(from, at))
    }
    this.precompressed = this.splicedFrom.length === 0 ? inPieces : undefined
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
  texts.set(body, JSON.stringify(body))
  return body
}

/** The JSON text of a response body. */
export function toJson(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const text = texts.get(body)
    if (text !== undefined) return text
  }
  return JSON.stringify(body)
}
