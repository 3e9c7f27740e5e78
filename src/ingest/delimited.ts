import { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import type { IngestLimits } from './limits.js'
import { linesOf, OVERSIZED } from './lines.js'

/** One row of a delimited file: its fields and its first line. */
export interface DelimitedRow {
  line: number
  fields: string[]
}

export interface DelimitedOptions {
  limits: IngestLimits
  /** `,` for CSV, `\t` for tab-delimited (CMS's PBP files), `|` for RRF. */
  delimiter: string
  /** Whether fields may be quoted (CSV); tab and RRF files take quotes as text. */
  quoted: boolean
  /** How the bytes are text: UTF-8, or a declared legacy encoding (CMS's text files are Windows-1252). */
  encoding: 'utf-8' | 'windows-1252'
  /** A physical line longer than the record limit: skipped as it streams by, reported with its number. */
  onOversized(line: number): void
}

/**
 * The text of a stream with every line over the record limit replaced by an empty line, so that the parser
 * never holds one, and its line numbers stay the file's. Decoded per chunk: both encodings are safe to split
 * at a line end.
 */
function boundedText(stream: Readable, options: DelimitedOptions): Readable {
  const decoder = new TextDecoder(options.encoding)
  return Readable.from(
    (async function* () {
      for await (const { first, data, bounds } of linesOf(stream, options.limits)) {
        let runStart = -1
        let runEnd = -1
        const run = function* () {
          if (runStart >= 0) yield `${decoder.decode(data.subarray(runStart, runEnd))}\n`
          runStart = -1
        }
        for (let at = 0; at < bounds.length; at += 2) {
          const start = bounds[at] as number
          const end = bounds[at + 1] as number
          if (start === OVERSIZED) {
            yield* run()
            options.onOversized(first + at / 2)
            yield '\n'
            continue
          }
          if (runStart < 0) runStart = start
          runEnd = end
        }
        yield* run()
      }
    })(),
    { objectMode: false },
  )
}

/**
 * Rows of a delimited file as they stream in, with their line numbers, each line bounded by the record limit
 * (src/ingest/lines.ts). Parsing is csv-parse's; blank lines are skipped; rows may have any number of fields.
 */
export async function* delimitedRows(
  stream: Readable,
  options: DelimitedOptions,
): AsyncGenerator<DelimitedRow> {
  const parser = boundedText(stream, options).pipe(
    parse({
      bom: true,
      delimiter: options.delimiter,
      quote: options.quoted ? '"' : false,
      relax_column_count: true,
      relax_quotes: true,
      // Each chunk's last line reaches the parser with "\n" alone (boundedText ends its text there), whatever
      // the file's line ends: csv-parse must not take the first line's CRLF as the only record delimiter.
      record_delimiter: ['\r\n', '\n'],
      skip_empty_lines: true,
      info: true,
    }),
  )
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>)
    yield { line: info.lines, fields: record }
}
