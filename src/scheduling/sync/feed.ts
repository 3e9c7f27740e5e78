import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { type FetchPolicy, safeFetch, type SafeResponse } from '../../ingest/fetch.js'
import { parseJsonRecord, readBounded } from '../../ingest/json.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from '../../ingest/limits.js'
import { type JsonLine, jsonLines } from '../../ingest/jsonLines.js'
import { type Lines, linesOf } from '../../ingest/lines.js'
import { guarded } from '../../ingest/sources.js'
import { UserError } from '../../userError.js'

/**
 * Reading a publisher's feed: the `$bulk-publish` manifest and its NDJSON outputs, over http(s) or from disk,
 * through the input-safety layer (src/ingest): records bounded and checked, remote files bounded in size and
 * time, and the files a remote manifest names fetched only over http(s), on the manifest's own side of the
 * operator's network.
 */

export class FeedError extends Error {
  override name = 'FeedError'
}

export interface ManifestOutput {
  type: string
  url: URL
}

export interface Manifest {
  transactionTime: string
  outputs: ManifestOutput[]
  /** What the files it names may reach: a local manifest is the operator's; a remote one is a document. */
  outputPolicy: FetchPolicy
}

export interface ManifestValidators {
  etag?: string | null
  lastModified?: string | null
  sha256?: string | null
}

export type ManifestFetch =
  { changed: false } | { changed: true; manifest: Manifest; validators: FetchedValidators }

export interface FetchedValidators {
  etag: string | null
  lastModified: string | null
  sha256: string
}

export interface FeedOptions {
  /** Idle timeout of a remote read, per chunk. */
  timeoutMs?: number
  limits?: IngestLimits
  signal?: AbortSignal
}

const isUrl = (location: string) => /^(https?|file):/i.test(location)

/** A manifest location as configured: an http(s) or file URL, or a file path. */
export function feedUrl(location: string): URL {
  if (isUrl(location)) return new URL(location)
  return pathToFileURL(resolve(location))
}

/**
 * A manifest location as it is stored: URLs as given, file paths made absolute (the sync may run elsewhere).
 * A URL of another scheme is refused, not taken for a relative path named `ftp:/…`.
 */
export function storedManifestLocation(location: string): string {
  if (isUrl(location)) {
    if (!URL.canParse(location)) throw new UserError(`Invalid manifest "${location}": not a URL`)
    return location
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location))
    throw new UserError(`Invalid manifest "${location}": use an http(s) or file URL, or a file path`)
  return resolve(location)
}

const isFile = (url: URL) => url.protocol === 'file:'

/**
 * Fetches the manifest unless it is unchanged: conditional headers for http(s), modification time for files,
 * and in both cases the body's hash, so an identical manifest costs no further work.
 */
export async function fetchManifest(
  location: string,
  previous: ManifestValidators,
  options: FeedOptions = {},
): Promise<ManifestFetch> {
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  const url = feedUrl(location)
  let body: Buffer
  let etag: string | null = null
  let lastModified: string | null = null
  let outputPolicy: FetchPolicy
  if (isFile(url)) {
    try {
      const info = await stat(url)
      if (info.size > limits.maxRecordBytes) throw new Error(tooLarge(limits))
      lastModified = info.mtime.toUTCString()
      body = await readFile(url)
    } catch (error) {
      throw new FeedError(`cannot read manifest ${url.pathname}: ${(error as Error).message}`)
    }
    // The operator's own file: what it names is trusted as the operator's.
    outputPolicy = { operatorUrl: true, fromInternal: true, allowHosts: limits.allowHosts }
  } else {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (previous.etag) headers['if-none-match'] = previous.etag
    if (previous.lastModified) headers['if-modified-since'] = previous.lastModified
    const response = await httpGet(
      url,
      headers,
      { operatorUrl: true, fromInternal: false, allowHosts: limits.allowHosts },
      options,
    )
    if (response.statusCode === 304) {
      await response.body.dump()
      return { changed: false }
    }
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new FeedError(`manifest ${url} answered ${response.statusCode}`)
    }
    etag = headerValue(response.headers.etag)
    lastModified = headerValue(response.headers['last-modified'])
    try {
      body = await readBounded(response.body, `manifest ${url}`, limits.maxRecordBytes)
    } catch (error) {
      throw new FeedError((error as Error).message)
    }
    outputPolicy = { operatorUrl: false, fromInternal: response.fromInternal, allowHosts: limits.allowHosts }
  }
  const sha256 = createHash('sha256').update(body).digest('hex')
  if (sha256 === previous.sha256) return { changed: false }
  return {
    changed: true,
    manifest: parseManifest(body, url, outputPolicy),
    validators: { etag, lastModified, sha256 },
  }
}

const tooLarge = (limits: IngestLimits) =>
  `larger than ${describeMb(limits.maxRecordBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one document`

function headerValue(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null
}

function parseManifest(body: Buffer, base: URL, outputPolicy: FetchPolicy): Manifest {
  const record = parseJsonRecord(body)
  if ('problem' in record) throw new FeedError(`manifest is ${record.problem}`)
  const manifest = record.value as { transactionTime?: unknown; output?: unknown }
  if (typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.output)) {
    throw new FeedError('manifest has no "output" list')
  }
  if (typeof manifest.transactionTime !== 'string' || Number.isNaN(Date.parse(manifest.transactionTime))) {
    throw new FeedError('manifest has no valid "transactionTime"')
  }
  const outputs = manifest.output.map((output: unknown, index: number) => {
    const entry = output as { type?: unknown; url?: unknown }
    if (typeof entry?.type !== 'string' || typeof entry.url !== 'string') {
      throw new FeedError(`manifest output ${index} needs a "type" and a "url"`)
    }
    let url: URL
    try {
      url = new URL(entry.url, base)
    } catch {
      throw new FeedError(`manifest output ${index} has an invalid url "${entry.url}"`)
    }
    // A remote manifest never makes the appliance read a local file or device.
    if (!isFile(base) && url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FeedError(
        `manifest output ${index} names ${url.protocol}// ("${entry.url}"): a remote manifest's files are fetched over http or https only`,
      )
    }
    return { type: entry.type, url }
  })
  return { transactionTime: new Date(manifest.transactionTime).toISOString(), outputs, outputPolicy }
}

async function httpGet(
  url: URL,
  headers: Record<string, string>,
  policy: FetchPolicy,
  options: FeedOptions,
): Promise<SafeResponse> {
  try {
    return await safeFetch(url, policy, {
      headers,
      signal: options.signal,
      headersTimeout: options.timeoutMs ?? 30_000,
      bodyTimeout: options.timeoutMs ?? 30_000,
    })
  } catch (error) {
    throw new FeedError(`cannot fetch ${url}: ${(error as Error).message}`)
  }
}

async function openOutput(output: URL, manifest: Manifest, options: FeedOptions): Promise<Readable> {
  if (isFile(output)) return createReadStream(output, { highWaterMark: 1 << 20 })
  const response = await httpGet(
    output,
    { accept: 'application/fhir+ndjson, application/x-ndjson, */*' },
    manifest.outputPolicy,
    options,
  )
  if (response.statusCode !== 200) {
    await response.body.dump()
    throw new FeedError(`${output} answered ${response.statusCode}`)
  }
  return guarded(response.body, output.href, options.limits ?? DEFAULT_INGEST_LIMITS)
}

/**
 * Streams an output file a chunk of lines at a time with flat memory. A read that fails part-way (connection
 * reset, short body, a source limit) throws, so the caller can keep the previous data.
 */
export async function* readNdjsonLines(
  url: URL,
  manifest: Manifest,
  options: FeedOptions = {},
): AsyncGenerator<Lines> {
  const stream = await openOutput(url, manifest, options)
  let line = 0
  try {
    for await (const lines of linesOf(stream, options.limits ?? DEFAULT_INGEST_LIMITS)) {
      yield lines
      line = lines.first + lines.bounds.length / 2 - 1
      if (options.signal?.aborted) throw new Error('the sync was interrupted')
    }
  } catch (error) {
    throw new FeedError(`${url} broke off after line ${line}: ${(error as Error).message}`)
  } finally {
    stream.destroy()
  }
}

/** What a line past the record limit is refused with. */
export const oversizedRecord = (limits: IngestLimits = DEFAULT_INGEST_LIMITS) =>
  tooLarge(limits).replace('document', 'record')

/** Streams an output file record by record (see readNdjsonLines); blank lines are skipped. */
export async function* readNdjson(
  url: URL,
  manifest: Manifest,
  options: FeedOptions = {},
): AsyncGenerator<JsonLine> {
  const oversized = oversizedRecord(options.limits)
  for await (const lines of readNdjsonLines(url, manifest, options)) yield* jsonLines(lines, oversized)
}
