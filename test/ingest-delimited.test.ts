import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { delimitedRows } from '../src/ingest/delimited.js'
import { DEFAULT_INGEST_LIMITS } from '../src/ingest/limits.js'

/** A file's bytes as a stream of `size`-byte chunks, as a file read arrives. */
const chunked = (bytes: Buffer, size: number) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
    })(),
    { objectMode: false },
  )

async function rowsOf(bytes: Buffer, delimiter: string, quoted: boolean) {
  const rows: { line: number; fields: string[] }[] = []
  for await (const row of delimitedRows(chunked(bytes, 4096), {
    limits: DEFAULT_INGEST_LIMITS,
    delimiter,
    quoted,
    encoding: 'utf-8',
    onOversized: () => undefined,
  }))
    rows.push(row)
  return rows
}

describe('delimited files', () => {
  it.each([
    ['CRLF', '\r\n'],
    ['LF', '\n'],
  ])(
    'reads every row of a %s file whose lines cross read chunks, each with its line number',
    async (_, end) => {
      const lines = Array.from(
        { length: 3000 },
        (_, index) => `${index},"plan, ${index}",${'x'.repeat(index % 97)}`,
      )
      const rows = await rowsOf(Buffer.from(['id,name,pad', ...lines].join(end) + end), ',', true)
      expect(rows).toHaveLength(3001)
      expect(rows.every((row) => row.fields.length === 3 && !/[\r\n]/.test(row.fields.join('')))).toBe(true)
      expect(rows[2000]).toEqual({ line: 2001, fields: ['1999', 'plan, 1999', 'x'.repeat(1999 % 97)] })
    },
  )

  it('reads tab-delimited CRLF files (CMS PBP) across chunks', async () => {
    const lines = Array.from(
      { length: 2000 },
      (_, index) => `H${1000 + index}\t001\t0\t${'y'.repeat(index % 50)}`,
    )
    const rows = await rowsOf(Buffer.from(['a\tb\tc\td', ...lines].join('\r\n') + '\r\n'), '\t', false)
    expect(rows).toHaveLength(2001)
    expect(rows.every((row) => row.fields.length === 4 && !row.fields[3]?.includes('\r'))).toBe(true)
  })
})
