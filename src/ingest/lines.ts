import type { Readable } from 'node:stream'

/**
 * A chunk's complete lines: the chunk's bytes and each line's byte range in them (line ends, a CR before them
 * and a leading BOM left out), the first numbered `first` (1-based). A line longer than the record limit is
 * the range (-1, -1): read past in constant memory, never buffered, so the caller reports it as refused.
 */
export interface Lines {
  first: number
  data: Buffer
  bounds: number[]
  /** The stream's last line, which ended without a line break: if it does not parse, the stream broke off. */
  unterminated?: boolean
}

/** A refused line's range in `Lines.bounds`. */
export const OVERSIZED = -1

/** Byte ranges of the complete lines of `data`, and where the rest starts; lines past `max` as OVERSIZED. */
function lineBounds(data: Buffer, max: number): { bounds: number[]; rest: number } {
  const bounds: number[] = []
  let start = 0
  for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
    const stop = end > start && data[end - 1] === 13 ? end - 1 : end
    if (stop - start > max) bounds.push(OVERSIZED, OVERSIZED)
    else bounds.push(start, stop)
    start = end + 1
  }
  return { bounds, rest: start }
}

/**
 * Lines as they stream in, a chunk at a time. Memory stays flat whatever the size: only a line that spans
 * chunks is copied, and only while it is within `maxRecordBytes`; past that the rest of the line is skipped
 * as it streams by.
 */
export async function* linesOf(
  stream: Readable,
  options: { maxRecordBytes?: number } = {},
): AsyncGenerator<Lines> {
  const max = options.maxRecordBytes ?? Number.POSITIVE_INFINITY
  /** The current line's bytes so far, when it spans chunks; `skipping` once it passed the limit. */
  let pending: Buffer[] = []
  let pendingLength = 0
  let skipping = false
  let next = 1
  const piece = (data: Buffer, bounds: number[]): Lines => {
    const start = bounds[0] as number
    if (
      next === 1 &&
      start >= 0 &&
      data[start] === 0xef &&
      data[start + 1] === 0xbb &&
      data[start + 2] === 0xbf
    )
      bounds[0] = Math.min(start + 3, bounds[1] as number)
    const found = { first: next, data, bounds }
    next += bounds.length / 2
    return found
  }
  const oversized = () => piece(Buffer.alloc(0), [OVERSIZED, OVERSIZED])
  const hold = (bytes: Buffer) => {
    pendingLength += bytes.length
    if (pendingLength > max) {
      skipping = true
      pending = []
      pendingLength = 0
    } else if (bytes.length > 0) pending.push(bytes)
  }
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let data = chunk
    if (skipping || pendingLength > 0) {
      const end = chunk.indexOf(10)
      if (end === -1) {
        if (!skipping) hold(chunk)
        continue
      }
      if (skipping) {
        skipping = false
        yield oversized()
      } else {
        const spanning = Buffer.concat([...pending, chunk.subarray(0, end + 1)])
        pending = []
        pendingLength = 0
        yield piece(spanning, lineBounds(spanning, max).bounds)
      }
      data = chunk.subarray(end + 1)
    }
    const lines = lineBounds(data, max)
    hold(data.subarray(lines.rest))
    if (lines.bounds.length > 0) yield piece(data, lines.bounds)
  }
  if (skipping) yield { ...oversized(), unterminated: true }
  else if (pendingLength > 0) {
    const last = Buffer.concat(pending)
    yield { ...piece(last, [0, last.length]), unterminated: true }
  }
}

/** Spaces, tabs and CRs only (a blank line of NDJSON, skipped). */
export function isBlank(data: Buffer, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const byte = data[at]
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false
  }
  return true
}
