import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BulkLoader } from '../src/db/bulkLoader.js'
import { WriterThread } from '../src/db/writerThread.js'

const dir = mkdtempSync(join(tmpdir(), 'svc-threads-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * The threads that write SQLite files open them as they start. What SQLite says when that fails (a full
 * disk, a file that cannot be made) must reach the caller in its words: thrown out of a thread as it is, a
 * SqliteError arrives as `{ code }` alone, and an import on a full disk once said "undefined".
 */
describe('a database thread that cannot open its file', () => {
  it('fails the release being built with SQLite’s message', async () => {
    // A schema SQLite refuses stands for any SqliteError of the opening steps (on a full disk, the same one).
    const loader = new BulkLoader(join(dir, 'release.db'), {
      schema: 'CREATE TABLE t (',
      statements: [],
      pageSize: 4096,
      cacheKib: 1024,
    })
    await expect(loader.loaded()).rejects.toThrow(/^incomplete input$/)
    await loader.abort()
  })

  it('fails the batch a writer thread was given with SQLite’s message', async () => {
    const writer = new WriterThread(join(dir, 'missing.live.db'))
    await expect(writer.run({ sql: ['SELECT 1'], ops: [[0, []]] })).rejects.toThrow(
      /^unable to open database file$/,
    )
    await writer.close()
  })
})
