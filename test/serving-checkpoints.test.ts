import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import { openDatabase, openLiveStore } from '../src/app/store.js'
import { liveDatabasePath } from '../src/db/live.js'
import type { Db } from '../src/db/sqlite.js'

/**
 * A checkpoint copies the WAL into the file and fsyncs it; SQLite runs one in whichever connection commits past
 * 1,000 pages of WAL. On the event loop, behind an import's writes, such an fsync held every request for
 * 200-270 ms. Here another connection grows each file's WAL past that without checkpointing, then the server
 * commits on its event loop: the file itself must not be written (only a checkpoint writes it in WAL mode).
 */
let dir: string
let dbPath: string
let server: RunningServer
const others: Db[] = []

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-checkpoints-'))
  dbPath = join(dir, 'svc.db')
  const config = await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {})
  // The request log's writer thread does not flush during the test: only the event loop commits.
  server = await startServer(config, () => Date.parse('2026-11-21T10:00:30.000Z'), {
    requestLogFlushMs: 600_000,
  })
})

afterEach(async () => {
  for (const other of others.splice(0)) other.close()
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Commits about 1,500 pages to the file's WAL from a connection of its own, which never checkpoints. */
function growWal(other: Db): void {
  others.push(other)
  other.pragma('wal_autocheckpoint = 0')
  other.exec('CREATE TABLE filler (bytes BLOB)')
  const insert = other.prepare('INSERT INTO filler (bytes) VALUES (?)')
  other.transaction(() => {
    for (let row = 0; row < 1500; row++) insert.run(Buffer.alloc(20_000, row % 251))
  })()
}

const written = (path: string) => {
  const { mtimeMs, size } = statSync(path)
  return { mtimeMs, size }
}

describe('checkpoints while serving', () => {
  it('leaves the live file alone when a request commits its usage lease over a long WAL', async () => {
    createOrganization(server.db, { slug: 'acme', name: 'Acme', plan: 'scale' })
    const { key } = createKey(server.db, { org: 'acme' })
    const livePath = liveDatabasePath(dbPath)
    growWal(openLiveStore({ db: dbPath }))
    const before = written(livePath)
    // The organization's first request takes a lease: a transaction of the live file on the event loop.
    const response = await request(`${server.url}/v1/scheduling/publishers`, {
      headers: { authorization: `Bearer ${key}` },
    })
    await response.body.text()
    expect(response.statusCode).toBe(200)
    expect(written(livePath)).toEqual(before)
    expect(statSync(`${livePath}-wal`).size).toBeGreaterThan(1000 * 4096)
  })

  it('leaves the main file alone when the server writes to it over a long WAL', () => {
    growWal(openDatabase(dbPath))
    const before = written(dbPath)
    createOrganization(server.db, { slug: 'acme', name: 'Acme', plan: 'scale' })
    expect(written(dbPath)).toEqual(before)
  })
})
