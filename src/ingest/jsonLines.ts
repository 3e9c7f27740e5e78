import { type JsonRecord, parseJsonRecord } from './json.js'
import { isBlank, type Lines, OVERSIZED } from './lines.js'

/** One line of NDJSON that is not blank: its number, and its value or why it is refused. */
export interface JsonLine {
  line: number
  record: JsonRecord
  /** The stream's last line, which had no line break: when it does not parse, the stream broke off. */
  unterminated?: boolean
}

/**
 * The records of a chunk of lines (linesOf), in order, blank lines skipped; a line past the record limit is
 * refused with `oversized`.
 */
export function* jsonLines(lines: Lines, oversized: string): Generator<JsonLine> {
  const { first, data, bounds } = lines
  const last = bounds.length - 2
  for (let at = 0; at < bounds.length; at += 2) {
    const start = bounds[at] as number
    const end = bounds[at + 1] as number
    if (start !== OVERSIZED && isBlank(data, start, end)) continue
    const line = first + at / 2
    const record = start === OVERSIZED ? { problem: oversized } : parseJsonRecord(data, start, end)
    yield at === last && lines.unterminated ? { line, record, unterminated: true } : { line, record }
  }
}
