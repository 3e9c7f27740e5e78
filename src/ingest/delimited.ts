import type { Readable } from 'node:stream'
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
  /** A record longer than the record limit: skipped as it streams by, reported with its first line. */
  onOversized(line: number): void
}

/**
 * The fields of one CSV record (RFC 4180): a field that starts with a quote runs to its closing quote, `""`
 * inside it being one quote, and may hold delimiters and line breaks; a quote elsewhere is text, and text
 * after a closing quote stays in the field (as csv-parse's relax_quotes reads it). Undefined when the text
 * ends inside a quoted field: the record goes on on the next line.
 */
function splitQuoted(text: string, delimiter: string): string[] | undefined {
  const fields: string[] = []
  let field = ''
  let at = 0
  for (;;) {
    if (text[at] === '"') {
      at++
      for (;;) {
        const quote = text.indexOf('"', at)
        if (quote === -1) return undefined
        field += text.slice(at, quote)
        at = quote + 1
        if (text[at] !== '"') break
        field += '"'
        at++
      }
    }
    const end = text.indexOf(delimiter, at)
    if (end === -1) {
      fields.push(field + text.slice(at))
      return fields
    }
    fields.push(field + text.slice(at, end))
    field = ''
    at = end + delimiter.length
  }
}

/**
 * Rows of a delimited file as they stream in, with their line numbers, each line bounded by the record limit
 * (src/ingest/lines.ts). A line without a quote is split as it is (most are: the fast path); blank lines are
 * skipped; rows may have any number of fields. Written here rather than with csv-parse: on the federal plan
 * files (1.6 million rows of 24 columns) csv-parse read 80 to 115 thousand rows a second, this three times
 * as many, with the line numbers reports need.
 */
export async function* delimitedRows(
  stream: Readable,
  options: DelimitedOptions,
): AsyncGenerator<DelimitedRow> {
  const { delimiter, quoted, limits } = options
  const decoder = options.encoding === 'utf-8' ? undefined : new TextDecoder(options.encoding)
  /** A quoted field's record that goes on past its first line: its text so far and where it began. */
  let open: { text: string; line: number } | undefined
  for await (const { first, data, bounds } of linesOf(stream, limits)) {
    for (let at = 0; at < bounds.length; at += 2) {
      const line = first + at / 2
      const start = bounds[at] as number
      if (start === OVERSIZED) {
        options.onOversized(open?.line ?? line)
        open = undefined
        continue
      }
      const end = bounds[at + 1] as number
      const text = decoder ? decoder.decode(data.subarray(start, end)) : data.toString('utf8', start, end)
      if (open === undefined && text === '') continue
      if (!quoted || (open === undefined && !text.includes('"'))) {
        yield { line, fields: text.split(delimiter) }
        continue
      }
      const record = open === undefined ? text : `${open.text}\n${text}`
      const fields = splitQuoted(record, delimiter)
      if (fields === undefined) {
        if (Buffer.byteLength(record) > limits.maxRecordBytes) {
          options.onOversized(open?.line ?? line)
          open = undefined
        } else open = { text: record, line: open?.line ?? line }
        continue
      }
      yield { line: open?.line ?? line, fields }
      open = undefined
    }
  }
  if (open !== undefined) throw new Error(`the quoted field opened on line ${open.line} never closes`)
}
