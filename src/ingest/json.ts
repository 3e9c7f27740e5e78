import { isUtf8 } from 'node:buffer'
import { UserError } from '../userError.js'
import { describeMb, MAX_JSON_DEPTH } from './limits.js'

/**
 * Whether a parsed JSON value nests deeper than `max` arrays and objects. Recursive, but never deeper than
 * `max + 1` calls whatever the value's depth: it answers as soon as it passes the limit.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH, depth = 1): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (depth > max) return true
  if (Array.isArray(value)) {
    for (const item of value)
      if (typeof item === 'object' && item !== null && nestsDeeperThan(item, max, depth + 1)) return true
    return false
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    if (typeof item === 'object' && item !== null && nestsDeeperThan(item, max, depth + 1)) return true
  }
  return false
}

/** One JSON record as its bytes came: the value, or why it is refused (for a `file:line: reason` report). */
export type JsonRecord = { value: unknown } | { problem: string }

/**
 * Parses a record: it must be UTF-8 (invalid bytes would otherwise be replaced silently), valid JSON, and
 * nested at most MAX_JSON_DEPTH deep, so nothing stored or relayed can overflow a serializer's stack.
 */
export function parseJsonRecord(data: Buffer, start = 0, end = data.length): JsonRecord {
  const bytes = data.subarray(start, end)
  if (!isUtf8(bytes)) return { problem: 'not valid UTF-8' }
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    return { problem: `not valid JSON (${(error as Error).message})` }
  }
  if (nestsDeeperThan(value)) return { problem: `nested deeper than ${MAX_JSON_DEPTH} levels` }
  return { value }
}

/**
 * A whole JSON document (a resource, a Bundle, a manifest), read into memory only up to `maxBytes`: past it
 * the document is refused with a message naming the limit, before it is buffered whole.
 */
export async function readJsonDocument(
  stream: AsyncIterable<Buffer>,
  name: string,
  maxBytes: number,
): Promise<{ bytes: Buffer; value: unknown }> {
  const bytes = await readBounded(stream, name, maxBytes)
  const record = parseJsonRecord(bytes)
  if ('problem' in record) throw new DocumentError(`${name}: ${record.problem}`)
  return { bytes, value: record.value }
}

/** A whole document's bytes, refused once they pass `maxBytes`, before they are buffered whole. */
export async function readBounded(
  stream: AsyncIterable<Buffer>,
  name: string,
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of stream) {
    length += chunk.length
    if (length > maxBytes) {
      throw new DocumentError(
        `${name}: larger than ${describeMb(maxBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one JSON document; send it as NDJSON, one record a line`,
      )
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** A whole document that cannot be taken: the import it belongs to stops, naming it. */
export class DocumentError extends UserError {
  override name = 'DocumentError'
}
