import { createReadStream } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { Decompress } from 'fzstd'
import { Agent, interceptors, request } from 'undici'
import { UserError } from '../userError.js'

/** One input of an import: a name for reports, and its bytes as the source publishes them. */
export interface ImportSource {
  name: string
  /** NDJSON (one resource per line) or one JSON document (a resource or a Bundle). */
  format: 'ndjson' | 'json'
  open(): Promise<Readable>
}

export class SourceError extends UserError {
  override name = 'SourceError'
}

const DATA_FILE = /\.(ndjson|jsonl|json)(\.gz|\.zst)?$/i

const formatOf = (name: string): 'ndjson' | 'json' =>
  /\.json(\.gz|\.zst)?$/i.test(name.replace(/[?#].*$/, '')) ? 'json' : 'ndjson'

function fileSource(path: string): ImportSource {
  // 1 MiB reads: a 7-million-line file in a few thousand reads rather than 100,000
  return {
    name: path,
    format: formatOf(path),
    open: async () => createReadStream(path, { highWaterMark: 1 << 20 }),
  }
}

/** Bulk-download hosts redirect to storage; a stalled transfer fails after a minute, not never. */
const following = new Agent({ bodyTimeout: 60_000, headersTimeout: 60_000 }).compose(
  interceptors.redirect({ maxRedirections: 5 }),
)

function urlSource(url: string, userAgent: string): ImportSource {
  return {
    name: url,
    format: formatOf(new URL(url).pathname),
    async open() {
      const response = await request(url, {
        headers: { 'user-agent': userAgent },
        dispatcher: following,
      })
      if (response.statusCode !== 200) {
        await response.body.dump()
        throw new SourceError(`${url} answered HTTP ${response.statusCode}`)
      }
      return response.body
    },
  }
}

/** Expands the command's arguments: files as given, directories to their data files (sorted), URLs. */
export async function resolveSources(inputs: string[], userAgent = 'svc-import'): Promise<ImportSource[]> {
  const sources: ImportSource[] = []
  for (const input of inputs) {
    if (/^https?:\/\//i.test(input)) {
      sources.push(urlSource(input, userAgent))
      continue
    }
    const info = await stat(input).catch(() => {
      throw new SourceError(`${input}: no such file or directory`)
    })
    if (info.isDirectory()) {
      const names = (await readdir(input)).filter((name) => DATA_FILE.test(name)).sort()
      if (names.length === 0)
        throw new SourceError(`${input}: no .ndjson/.jsonl/.json files (plain, .gz or .zst)`)
      sources.push(...names.map((name) => fileSource(join(input, name))))
    } else {
      sources.push(fileSource(input))
    }
  }
  return sources
}

/** fzstd as a stream: the national directory's bulk files are zstd frames, which Node 20's zlib cannot read. */
class ZstdDecoder extends Transform {
  readonly #decoder = new Decompress((data) => {
    // fzstd may hand out views of its window; copy before it is reused.
    this.push(Buffer.from(data))
  })

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.#decoder.push(chunk)
      done()
    } catch (error) {
      done(error as Error)
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.#decoder.push(new Uint8Array(0), true)
      done()
    } catch (error) {
      done(new Error(`truncated zstd stream (${(error as Error).message})`))
    }
  }
}

/** Decompresses by content, not by name: gzip and zstd magic numbers; anything else passes through. */
export async function decoded(raw: Readable): Promise<Readable> {
  const chunks = raw[Symbol.asyncIterator]()
  const first = await chunks.next()
  if (first.done) return Readable.from([])
  const head = first.value as Buffer
  const whole = Readable.from(
    (async function* () {
      yield head
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value as Buffer
    })(),
    { objectMode: false },
  )
  const decoder =
    head.length >= 4 && head[0] === 0x1f && head[1] === 0x8b
      ? createGunzip()
      : head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528
        ? new ZstdDecoder()
        : undefined
  return decoder ? pipeline(whole, decoder, () => undefined) : whole
}

/** Byte ranges of the complete lines of `data` (line ends and a CR before them left out), and where the rest starts. */
function lineBounds(data: Buffer): { bounds: number[]; rest: number } {
  const bounds: number[] = []
  let start = 0
  for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
    bounds.push(start, end > start && data[end - 1] === 13 ? end - 1 : end)
    start = end + 1
  }
  return { bounds, rest: start }
}

/**
 * Lines as they stream in, a chunk at a time: the chunk's bytes and each line's byte range in them (line
 * ends, a CR before them and a leading BOM left out), with the 1-based number of the first line. The importer
 * decodes each line to parse it and hands its bytes on as they are; memory stays flat whatever the size.
 */
export async function* linesOf(
  stream: Readable,
): AsyncGenerator<{ first: number; data: Buffer; bounds: number[] }> {
  let rest: Buffer = Buffer.alloc(0)
  let next = 1
  /** Lines of `data` as found, the first line of the stream without its BOM. */
  const piece = (data: Buffer, bounds: number[]) => {
    const start = bounds[0] as number
    if (next === 1 && data[start] === 0xef && data[start + 1] === 0xbb && data[start + 2] === 0xbf)
      bounds[0] = Math.min(start + 3, bounds[1] as number)
    const found = { first: next, data, bounds }
    next += bounds.length / 2
    return found
  }
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let data = chunk
    if (rest.length > 0) {
      // Only the line that spans two chunks is copied, not the whole chunk.
      const end = chunk.indexOf(10)
      if (end === -1) {
        rest = Buffer.concat([rest, chunk])
        continue
      }
      const spanning = Buffer.concat([rest, chunk.subarray(0, end + 1)])
      yield piece(spanning, lineBounds(spanning).bounds)
      data = chunk.subarray(end + 1)
    }
    const lines = lineBounds(data)
    rest = data.subarray(lines.rest)
    if (lines.bounds.length > 0) yield piece(data, lines.bounds)
  }
  if (rest.length > 0) yield piece(rest, [0, rest.length])
}
