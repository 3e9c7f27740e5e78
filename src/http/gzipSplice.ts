import { constants, crc32, deflateRawSync } from 'node:zlib'
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

/** Bytes with their compressed data made already (a large resource as its release keeps it). */
export type Precompressed = DeflatedPart & { readonly bytes: Buffer }

function trailer(whole: Buffer): Buffer {
  const bytes = Buffer.allocUnsafe(TRAILER_BYTES)
  bytes.writeUInt32LE(crc32(whole), 0)
  bytes.writeUInt32LE(whole.length % 2 ** 32, 4)
  return bytes
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
  return Buffer.concat([HEADER, deflated, FINAL, trailer(bytes)])
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
  const pieces: Buffer[] = [HEADER]
  for (const part of parts) {
    if (Buffer.isBuffer(part)) stored(part, pieces)
    else pieces.push(part.deflated)
  }
  pieces.push(FINAL, trailer(whole))
  return Buffer.concat(pieces)
}
