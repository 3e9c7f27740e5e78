import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { pathToFileURL } from 'node:url'
import { type Dispatcher, request } from 'undici'

/** Reading a publisher's feed: the `$bulk-publish` manifest and its NDJSON outputs, over http(s) or from disk. */

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
  dispatcher?: Dispatcher
  timeoutMs?: number
}

const isUrl = (location: string) => /^(https?|file):/i.test(location)

/** A manifest location as configured: an http(s) or file URL, or a file path. */
export function feedUrl(location: string): URL {
  if (isUrl(location)) return new URL(location)
  return pathToFileURL(resolve(location))
}

/** A manifest location as it is stored: URLs as given, file paths made absolute (the sync may run elsewhere). */
export function storedManifestLocation(location: string): string {
  return isUrl(location) ? location : resolve(location)
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
  const url = feedUrl(location)
  let body: Buffer
  let etag: string | null = null
  let lastModified: string | null = null
  if (isFile(url)) {
    try {
      lastModified = (await stat(url)).mtime.toUTCString()
      body = await readFile(url)
    } catch (error) {
      throw new FeedError(`cannot read manifest ${url.pathname}: ${(error as Error).message}`)
    }
  } else {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (previous.etag) headers['if-none-match'] = previous.etag
    if (previous.lastModified) headers['if-modified-since'] = previous.lastModified
    const response = await httpGet(url, headers, options)
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
    body = Buffer.from(await response.body.arrayBuffer())
  }
  const sha256 = createHash('sha256').update(body).digest('hex')
  if (sha256 === previous.sha256) return { changed: false }
  return { changed: true, manifest: parseManifest(body, url), validators: { etag, lastModified, sha256 } }
}

function headerValue(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null
}

function parseManifest(body: Buffer, base: URL): Manifest {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch (error) {
    throw new FeedError(`manifest is not JSON: ${(error as Error).message}`)
  }
  const manifest = parsed as { transactionTime?: unknown; output?: unknown }
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
    try {
      return { type: entry.type, url: new URL(entry.url, base) }
    } catch {
      throw new FeedError(`manifest output ${index} has an invalid url "${entry.url}"`)
    }
  })
  return { transactionTime: new Date(manifest.transactionTime).toISOString(), outputs }
}

async function httpGet(url: URL, headers: Record<string, string>, options: FeedOptions) {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FeedError(`unsupported URL scheme ${url.protocol}`)
  }
  try {
    return await request(url, {
      headers,
      dispatcher: options.dispatcher,
      headersTimeout: options.timeoutMs ?? 30_000,
      bodyTimeout: options.timeoutMs ?? 30_000,
    })
  } catch (error) {
    throw new FeedError(`cannot fetch ${url}: ${(error as Error).message}`)
  }
}

async function openOutput(url: URL, options: FeedOptions): Promise<Readable> {
  if (isFile(url)) return createReadStream(url)
  const response = await httpGet(
    url,
    { accept: 'application/fhir+ndjson, application/x-ndjson, */*' },
    options,
  )
  if (response.statusCode !== 200) {
    await response.body.dump()
    throw new FeedError(`${url} answered ${response.statusCode}`)
  }
  return response.body
}

export interface NdjsonLine {
  line: number
  text: string
  /** The file's last line had no line break: if it does not parse, the file broke off. */
  unterminated?: boolean
}

/**
 * Streams an output file line by line with flat memory. A read that fails part-way (connection reset,
 * short body) throws, so the caller can keep the previous data; blank lines are skipped.
 */
export async function* readNdjson(url: URL, options: FeedOptions = {}): AsyncGenerator<NdjsonLine> {
  const stream = await openOutput(url, options)
  const decoder = new StringDecoder('utf8')
  let pending = ''
  let line = 0
  try {
    for await (const chunk of stream) {
      pending += decoder.write(chunk as Buffer)
      let newline = pending.indexOf('\n')
      let from = 0
      while (newline !== -1) {
        line++
        const text = pending.slice(from, newline).trim()
        if (text) yield { line, text }
        from = newline + 1
        newline = pending.indexOf('\n', from)
      }
      pending = pending.slice(from)
    }
  } catch (error) {
    throw new FeedError(`${url} broke off after line ${line}: ${(error as Error).message}`)
  }
  pending += decoder.end()
  const last = pending.trim()
  if (last) yield { line: line + 1, text: last, unterminated: true }
}
