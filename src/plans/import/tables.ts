import { Readable } from 'node:stream'
import { type DelimitedRow, delimitedRows } from '../../ingest/delimited.js'
import type { IngestLimits } from '../../ingest/limits.js'
import { type Layout, recognise } from './layouts.js'
import type { PlanFile } from './planFiles.js'

/** A header read, and where it came from. */
export interface PlanTable {
  file: PlanFile
  layout: Layout
  /** Column positions by name; a repeated name (PBP files repeat some) is its first position. */
  columns: Map<string, number>
  /** The data rows, after the header, with their line numbers in the file. */
  rows: AsyncIterable<DelimitedRow>
}

/** A row's fields by column name: trimmed, "" when the column is absent or the row is short. */
export type Row = (column: string) => string

export function rowReader(columns: Map<string, number>, fields: readonly string[]): Row {
  return (column) => {
    const at = columns.get(column)
    return at === undefined ? '' : (fields[at] ?? '').trim()
  }
}

/** Bytes read to find the header line: the widest federal header is a few kilobytes. */
const HEADER_PEEK = 1 << 16

/** The first bytes of a stream, and the stream whole again (those bytes first). */
async function peek(stream: Readable, bytes: number): Promise<{ head: Buffer; whole: Readable }> {
  const chunks: Buffer[] = []
  let length = 0
  const iterator = stream[Symbol.asyncIterator]()
  while (length < bytes) {
    const next = await iterator.next()
    if (next.done) break
    chunks.push(next.value as Buffer)
    length += (next.value as Buffer).length
  }
  const head = Buffer.concat(chunks)
  const whole = Readable.from(
    (async function* () {
      yield head
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        yield next.value as Buffer
    })(),
    { objectMode: false },
  )
  return { head, whole }
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * How a file's bytes are text: CMS's tab-delimited PBP files are Windows-1252 (its data dictionary says so);
 * a CSV is UTF-8 unless its first bytes cannot be.
 */
function encodingOf(head: Buffer, delimiter: string): 'utf-8' | 'windows-1252' {
  if (head.subarray(0, 3).equals(UTF8_BOM)) return 'utf-8'
  if (delimiter === '\t') return 'windows-1252'
  try {
    // The peek may end inside a character: only the bytes before its last line break are judged.
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(head.lastIndexOf(10), 0)))
    return 'utf-8'
  } catch {
    return 'windows-1252'
  }
}

/**
 * Opens a plan file and reads its header: the layout it is recognised as (undefined when none: the file is
 * not one the import maps), its delimiter (tab or comma, by the header line) and encoding.
 */
export async function openTable(
  file: PlanFile,
  limits: IngestLimits,
  onOversized: (line: number) => void,
): Promise<PlanTable | { unrecognised: string[] }> {
  const { head, whole } = await peek(await file.open(), HEADER_PEEK)
  const end = head.indexOf(10)
  const headerLine = head.subarray(0, end === -1 ? head.length : end).toString('latin1')
  const delimiter = headerLine.split('\t').length > headerLine.split(',').length ? '\t' : ','
  const rows = delimitedRows(whole, {
    limits,
    delimiter,
    quoted: delimiter === ',',
    encoding: encodingOf(head, delimiter),
    onOversized,
  })
  const iterator = rows[Symbol.asyncIterator]()
  const first = await iterator.next()
  const header = first.done ? [] : first.value.fields.map((name) => name.trim())
  const layout = recognise(header)
  if (!layout) {
    whole.destroy()
    return { unrecognised: header }
  }
  const columns = new Map<string, number>()
  header.forEach((name, at) => {
    if (!columns.has(name)) columns.set(name, at)
  })
  return {
    file,
    layout,
    columns,
    rows: {
      [Symbol.asyncIterator]: () => iterator,
    },
  }
}
