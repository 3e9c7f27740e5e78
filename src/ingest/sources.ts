import { createReadStream, type Stats } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream'
import { UserError } from '../userError.js'
import { decoded } from './decode.js'
import { safeFetch } from './fetch.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from './limits.js'

/** One input of an import: a name for reports, and its bytes, decompressed and bounded. */
export interface ImportSource {
  name: string
  /** NDJSON (one resource per line) or one JSON document (a resource or a Bundle). */
  format: 'ndjson' | 'json'
  open(signal?: AbortSignal): Promise<Readable>
}

export class SourceError extends UserError {
  override name = 'SourceError'
}

/**
 * Bounds a remote source as it streams: it stops with an error naming the limit once its decompressed bytes
 * pass `maxSourceBytes`, or once it has run `sourceTimeoutMs` whole (besides the idle timeout of each read).
 */
class SourceGuard extends Transform {
  #bytes = 0
  readonly #timer: NodeJS.Timeout

  constructor(
    private readonly name: string,
    private readonly limits: IngestLimits,
  ) {
    super()
    this.#timer = setTimeout(() => {
      this.destroy(
        new SourceError(
          `${name}: stopped after ${limits.sourceTimeoutMs / 1000} s, the limit of one source (SVC_IMPORT_SOURCE_TIMEOUT_S)`,
        ),
      )
    }, limits.sourceTimeoutMs)
    this.#timer.unref()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#bytes += chunk.length
    if (this.#bytes > this.limits.maxSourceBytes) {
      done(
        new SourceError(
          `${this.name}: stopped at ${describeMb(this.limits.maxSourceBytes, 'SVC_IMPORT_MAX_SOURCE_MB')} of data, the limit of one source`,
        ),
      )
      return
    }
    done(null, chunk)
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    clearTimeout(this.#timer)
    done(error)
  }
}

/** A remote source's decompressed bytes, bounded in size and time. */
export function guarded(stream: Readable, name: string, limits: IngestLimits): Readable {
  return pipeline(stream, new SourceGuard(name, limits), () => undefined)
}

const DATA_FILE = /\.(ndjson|jsonl|json)(\.gz|\.zst)?$/i

const formatOf = (name: string): 'ndjson' | 'json' =>
  /\.json(\.gz|\.zst)?$/i.test(name.replace(/[?#].*$/, '')) ? 'json' : 'ndjson'

function fileSource(path: string): ImportSource {
  return {
    name: path,
    format: formatOf(path),
    // 1 MiB reads: a 7-million-line file in a few thousand reads rather than 100,000.
    open: async () => decoded(createReadStream(path, { highWaterMark: 1 << 20 })),
  }
}

/** A URL the operator typed: trusted as typed; what it redirects to is checked (src/ingest/fetch.ts). */
function urlSource(url: string, userAgent: string, limits: IngestLimits): ImportSource {
  return {
    name: url,
    format: formatOf(new URL(url).pathname),
    async open(signal) {
      const response = await safeFetch(
        new URL(url),
        { operatorUrl: true, fromInternal: false, allowHosts: limits.allowHosts },
        // Bulk-download hosts redirect to storage; a stalled transfer fails after a minute, not never.
        { headers: { 'user-agent': userAgent }, signal, headersTimeout: 60_000, bodyTimeout: 60_000 },
      ).catch((error: Error) => {
        throw new SourceError(`${url}: ${error.message}`)
      })
      if (response.statusCode !== 200) {
        await response.body.dump()
        throw new SourceError(`${url} answered HTTP ${response.statusCode}`)
      }
      return guarded(await decoded(response.body), url, limits)
    },
  }
}

/** What a command's path argument is, or a SourceError naming it when there is nothing there. */
export function statInput(input: string): Promise<Stats> {
  return stat(input).catch(() => {
    throw new SourceError(`${input}: no such file or directory`)
  })
}

/** Expands the command's arguments: files as given, directories to their data files (sorted), URLs. */
export async function resolveSources(
  inputs: string[],
  options: { userAgent?: string; limits?: IngestLimits } = {},
): Promise<ImportSource[]> {
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  const sources: ImportSource[] = []
  for (const input of inputs) {
    if (/^https?:\/\//i.test(input)) {
      sources.push(urlSource(input, options.userAgent ?? 'svc-import', limits))
      continue
    }
    const info = await statInput(input)
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
