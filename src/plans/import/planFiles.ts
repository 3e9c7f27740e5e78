import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, open, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { decoded } from '../../ingest/decode.js'
import type { IngestLimits } from '../../ingest/limits.js'
import { resolveSources, SourceError, statInput } from '../../ingest/sources.js'
import { isZip, openZip, type ZipArchive } from '../../ingest/zip.js'

/** One file an import reads: its name for reports (`puf.zip:plan-attributes-puf.csv`), and its bytes. */
export interface PlanFile {
  name: string
  /**
   * What a plan says it was read from (`meta`): the file's own name, without the operator's folders or URL
   * (`plan-attributes-puf.zip:plan-attributes-puf.csv`).
   */
  label: string
  open(): Promise<Readable>
}

/** The last segment of a path or URL, without its query. */
const lastSegment = (name: string) => {
  const path = /^https?:\/\//i.test(name) ? new URL(name).pathname : name
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? 'download'
}

/** Text files the federal plan data comes as (CSV, tab-delimited .txt), plain or gzipped, and zips of them. */
const TABLE = /\.(csv|txt)(\.gz)?$/i
const ZIP = /\.zip$/i

async function startsAsZip(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(4)
    await handle.read(head, 0, 4, 0)
    return isZip(head)
  } finally {
    await handle.close()
  }
}

async function walk(folder: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) found.push(...(await walk(path)))
    else if (TABLE.test(entry.name) || ZIP.test(entry.name)) found.push(path)
  }
  return found
}

/**
 * The files of an import's arguments: files as given, folders walked for .csv/.txt/.zip files, zips read in
 * place (their .csv/.txt members), URLs downloaded whole into a folder of the import's own (a zip needs its
 * central directory), under the limits of every remote source. `close` removes the downloads.
 */
export async function planFiles(
  inputs: readonly string[],
  options: { limits: IngestLimits; workDir: string; signal?: AbortSignal },
): Promise<{ files: PlanFile[]; close(): Promise<void> }> {
  const archives: ZipArchive[] = []
  let downloads: string | undefined
  const files: PlanFile[] = []
  const close = async () => {
    for (const archive of archives) archive.close()
    if (downloads) await rm(downloads, { recursive: true, force: true })
  }
  const add = async (path: string, name: string) => {
    if (await startsAsZip(path)) {
      const archive = await openZip(path)
      archives.push(archive)
      for (const member of archive.members) {
        if (TABLE.test(member.name))
          files.push({
            name: `${name}:${member.name}`,
            label: `${lastSegment(name)}:${lastSegment(member.name)}`,
            open: async () => decoded(await member.open()),
          })
      }
    } else {
      files.push({
        name,
        label: lastSegment(name),
        open: () => decoded(createReadStream(path, { highWaterMark: 1 << 20 })),
      })
    }
  }
  try {
    for (const [index, input] of inputs.entries()) {
      if (/^https?:\/\//i.test(input)) {
        downloads ??= await mkdtemp(join(options.workDir, '.svc-plans-download-'))
        const path = join(downloads, String(index))
        // One URL is one source: bounded in size and time, redirects checked (src/ingest/sources.ts).
        for (const source of await resolveSources([input], {
          limits: options.limits,
          userAgent: 'svc-import-plans',
        }))
          await pipeline(await source.open(options.signal), createWriteStream(path))
        await add(path, input)
        continue
      }
      const info = await statInput(input)
      if (info.isDirectory()) {
        const found = await walk(input)
        if (found.length === 0) throw new SourceError(`${input}: no .csv, .txt or .zip files`)
        for (const path of found) await add(path, path)
      } else {
        await add(input, input)
      }
    }
  } catch (error) {
    await close()
    throw error
  }
  return { files, close }
}
