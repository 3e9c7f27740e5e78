import type { Readable } from 'node:stream'
import yauzl from 'yauzl'
import { SourceError } from './sources.js'

/** One file inside a zip archive: read in place, never unpacked to disk. */
export interface ZipMember {
  /** Its path inside the archive. */
  name: string
  open(): Promise<Readable>
}

/** An open zip archive: its files (folders left out) in archive order; `close` when done with them. */
export interface ZipArchive {
  members: ZipMember[]
  close(): void
}

/** Whether a file starts as a zip archive does (a local file header or an empty archive's end record). */
export const isZip = (head: Uint8Array) =>
  head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5)

/**
 * Opens a zip archive from its central directory (yauzl: sizes checked against the directory, names that
 * would escape a folder refused). Its members' bytes are read as they are asked for.
 */
export function openZip(path: string): Promise<ZipArchive> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, zip) => {
      if (error || !zip) {
        reject(new SourceError(`${path}: not a readable zip archive (${error?.message ?? 'no archive'})`))
        return
      }
      const members: ZipMember[] = []
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/'))
          members.push({
            name: entry.fileName,
            open: () =>
              new Promise((opened, failed) =>
                zip.openReadStream(entry, (streamError, stream) => {
                  if (streamError || !stream)
                    failed(
                      new SourceError(`${path}:${entry.fileName}: ${streamError?.message ?? 'unreadable'}`),
                    )
                  else opened(stream)
                }),
              ),
          })
        zip.readEntry()
      })
      zip.once('end', () => resolve({ members, close: () => zip.close() }))
      zip.once('error', (zipError: Error) => {
        zip.close()
        reject(new SourceError(`${path}: not a readable zip archive (${zipError.message})`))
      })
      zip.readEntry()
    })
  })
}
