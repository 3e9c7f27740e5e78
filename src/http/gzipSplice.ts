import { constants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib'
import { KEPT_GZIP_LEVEL } from './middleware/compressWhenAccepted.js'

/**
 * Gzip made by splicing. Deflate data compressed on its own and ended by a sync flush refers to nothing
 * before it and ends on a byte boundary, so such parts and stored (uncompressed) blocks follow one another
 * into one valid deflate stream (RFC 1951); a gzip member (RFC 1952) wraps it with the CRC-32 and length of
 * the whole. A batch's answer is spliced so from its entries' kept compressed forms: for 100 lookups about
 * 50 µs instead of 0.8 ms to compress its 99 KB anew, for 49 KB instead of 13 KB, since each entry is
 * compressed alone (and the client inflates it in about 0.3 ms instead of 0.07 ms: a dynamic Huffman table
 * per entry; fixed codes would halve that for a quarter more bytes).
 */

/** No file name, no time, from a Unix system: what zlib writes. */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
/** An empty stored block with BFINAL set: ends the deflate stream. */
const FINAL = Buffer.from([1, 0, 0, 0xff, 0xff])
const TRAILER_BYTES = 8
const STORED_BLOCK_MAX = 0xffff

/** Compressed data of one part, as spliced: a deflate stream's middle, ended by a sync flush. */
export type DeflatedPart = { readonly deflated: Buffer }

/**
 * Bytes known by their compressed data, CRC-32 and length, made already (a large resource as its release
 * keeps it): an answer of such pieces is gzipped without reading, or even having, their bytes.
 */
export type Precompressed = DeflatedPart & { readonly crc: number; readonly length: number }

/** Text known by its compressed form (`kept`), its bytes read only if they are wanted. */
export interface KeptText {
  readonly kept: Precompressed
  readonly bytes: Buffer
}

function trailer(crc: number, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(TRAILER_BYTES)
  bytes.writeUInt32LE(crc, 0)
  bytes.writeUInt32LE(length % 2 ** 32, 4)
  return bytes
}

const CRC_POLYNOMIAL = 0xedb88320

/** a(x) b(x) modulo the CRC-32 polynomial, both reflected as CRCs are. */
function multiplyModP(a: number, b: number): number {
  let product = 0
  for (let bit = 0x80000000; bit !== 0; bit >>>= 1) {
    if (a & bit) product ^= b
    b = b & 1 ? (b >>> 1) ^ CRC_POLYNOMIAL : b >>> 1
  }
  return product >>> 0
}

/** x^(2^k) modulo the polynomial, for k = 0..31. */
const X_TO_2_TO_K = (() => {
  const table: number[] = []
  let power = 0x40000000 // x^1
  for (let k = 0; k < 32; k++) {
    table.push(power)
    power = multiplyModP(power, power)
  }
  return table
})()

/**
 * The CRC-32 of A followed by B, from A's, B's and B's length: zlib's crc32_combine (Node does not expose it),
 * by multiplying A's CRC by x^(8 length) modulo the polynomial.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  let shift = 0x80000000 // x^0
  let k = 3 // one byte is x^8 = x^(2^3)
  for (let n = lengthB; n > 0; n = Math.floor(n / 2), k++)
    if (n % 2 === 1) shift = multiplyModP(X_TO_2_TO_K[k % 32] as number, shift)
  return (multiplyModP(shift, crcA) ^ crcB) >>> 0
}

/** `bytes` as stored blocks (each at most 64 KiB, 5 bytes of header). */
function stored(bytes: Buffer, into: Buffer[]): void {
  for (let at = 0; at < bytes.length; at += STORED_BLOCK_MAX) {
    const block = bytes.subarray(at, at + STORED_BLOCK_MAX)
    const header = Buffer.allocUnsafe(5)
    header[0] = 0
    header.writeUInt16LE(block.length, 1)
    header.writeUInt16LE(~block.length & 0xffff, 3)
    into.push(header, block)
  }
}

/**
 * A gzip member of `bytes` whose compressed data can be spliced into another's (`deflatedPart`): members of
 * any level splice, each being whole deflate blocks.
 */
export function spliceableGzip(bytes: Buffer, level = KEPT_GZIP_LEVEL): Buffer {
  const deflated = deflateRawSync(bytes, { level, finishFlush: constants.Z_SYNC_FLUSH })
  return Buffer.concat([HEADER, deflated, FINAL, trailer(crc32(bytes), bytes.length)])
}

/** The bytes of a precompressed piece, from its compressed data. */
export function inflated(piece: Precompressed): Buffer {
  return inflateRawSync(piece.deflated, { finishFlush: constants.Z_SYNC_FLUSH })
}

/** The compressed data of a member made by `spliceableGzip`, without its end. */
export function deflatedPart(member: Buffer): DeflatedPart {
  return { deflated: member.subarray(HEADER.length, member.length - FINAL.length - TRAILER_BYTES) }
}

/**
 * A gzip member of `whole`, given in order as its plain bytes (stored as they are) and the compressed data
 * of its other parts.
 */
export function spliceGzip(whole: Buffer, parts: readonly (Buffer | DeflatedPart)[]): Buffer {
  return member(parts, crc32(whole), whole.length)
}

/**
 * A gzip member of pieces given in order, plain bytes (stored as they are) or precompressed: the CRC of the
 * whole is combined from theirs, so a precompressed piece's bytes are not needed.
 */
export function spliceGzipOf(pieces: readonly (Buffer | Precompressed)[]): Buffer {
  let crc = 0
  let length = 0
  for (const piece of pieces) {
    if (Buffer.isBuffer(piece)) {
      crc = crc32(piece, crc)
      length += piece.length
    } else {
      crc = crc32Combine(crc, piece.crc, piece.length)
      length += piece.length
    }
  }
  return member(pieces, crc, length)
}

function member(parts: readonly (Buffer | DeflatedPart)[], crc: number, length: number): Buffer {
  const pieces: Buffer[] = [HEADER]
  for (const part of parts) {
    if (Buffer.isBuffer(part)) stored(part, pieces)
    else pieces.push(part.deflated)
  }
  pieces.push(FINAL, trailer(crc, length))
  return Buffer.concat(pieces)
}
