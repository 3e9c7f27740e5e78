import { rmSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { SQLITE_DRIVER, THREAD_DRIVER } from './driverPath.js'

/**
 * One prepared insert of a load. `bytes` names the parameter given as a range of the batch's bytes (two
 * numbers in the ops: start, end), bound as a BLOB (`CAST(? AS TEXT)` stores it as text): large texts cross
 * threads as one transferred buffer, not as strings to copy, and are never decoded or re-encoded on the way.
 */
export interface LoadStatement {
  sql: string
  bytes?: number
  /**
   * With `bytes`: the parameter position (counted once the range is one parameter) given the range's
   * spliceable deflate data (src/http/gzipSplice.ts), and the next its CRC-32, when it holds at least
   * `minBytes`, NULL and NULL otherwise; made on the loading thread, which has time to spare while the
   * caller prepares rows.
   */
  deflated?: { at: number; minBytes: number; level: number }
}

/**
 * Statement runs, flat: `statement index, value count, values…` one after the other. Flat, because a message
 * of primitives crosses threads several times faster than one of many small arrays.
 */
export type LoadOps = (string | number | null)[]

export interface BulkLoaderOptions {
  /** DDL run on the new file before the first batch. */
  schema: string
  statements: readonly LoadStatement[]
  pageSize: number
  cacheKib: number
}

/**
 * The thread's whole program, plain JavaScript so that it starts the same from the built code and from the
 * TypeScript sources tests and benchmarks run (see writerThread.ts). The file is new and nobody reads it
 * until the caller publishes it, so nothing a crash could tear matters: no journal, no syncs, and a single
 * fsync once it is complete.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads')
const { closeSync, fsyncSync, openSync } = require('node:fs')
const { constants, crc32, deflateRawSync } = require('node:zlib')
const { dirname } = require('node:path')
${THREAD_DRIVER}
const { path, schema, statements, pageSize, cacheKib } = workerData
const { db, prepared } = setUp(() => {
  const db = new Database(path)
  db.pragma('page_size = ' + pageSize)
  db.pragma('journal_mode = OFF')
  db.pragma('synchronous = OFF')
  db.pragma('locking_mode = EXCLUSIVE')
  db.pragma('cache_size = -' + cacheKib)
  db.exec(schema)
  const prepared = statements.map((statement) => db.prepare(statement.sql))
  db.exec('BEGIN')
  return { db, prepared }
})
const bytesAt = statements.map((statement) => statement.bytes)
const deflatedAt = statements.map((statement) => statement.deflated)

function write(ops, bytes) {
  for (let at = 0; at < ops.length; ) {
    const index = ops[at]
    const end = at + 2 + ops[at + 1]
    const params = ops.slice(at + 2, end)
    at = end
    const range = bytesAt[index]
    if (range !== undefined) {
      const text = bytes.subarray(params[range], params[range + 1])
      params.splice(range, 2, text)
      const deflated = deflatedAt[index]
      // As gzipSplice.ts's spliceableGzip compresses: a raw deflate stream ended by a sync flush.
      if (deflated)
        params.splice(deflated.at, 0, ...(text.length >= deflated.minBytes
          ? [deflateRawSync(text, { level: deflated.level, finishFlush: constants.Z_SYNC_FLUSH }), crc32(text)]
          : [null, null]))
    }
    prepared[index].run(params)
  }
}

function sync(file, flags) {
  const fd = openSync(file, flags)
  try { fsyncSync(fd) } finally { closeSync(fd) }
}

const actions = {
  write: ({ ops, bytes }) => write(ops, bytes),
  loaded: () => db.exec('COMMIT'),
  exec: ({ sql }) => { db.exec(sql) },
  all: ({ sql, params }) => db.prepare(sql).all(params),
  close: () => {
    db.close()
    sync(path, 'r+')
    sync(dirname(path), 'r')
  },
  abort: () => { if (db.open) db.close() },
}

parentPort.on('message', (message) => {
  try {
    parentPort.postMessage({ result: actions[message.action](message) })
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) })
  }
})
`

interface Pending {
  resolve(result: unknown): void
  reject(error: Error): void
}

/**
 * Builds a new SQLite file on a thread of its own: the caller prepares rows on its thread while this one
 * writes the previous batch, so parsing and writing use a core each. The rows go in one transaction, ended
 * by loaded(); exec() and all() then finish the file (indexes…) and close() makes it durable. Requests are
 * answered in the order sent.
 */
export class BulkLoader {
  readonly #worker: Worker
  readonly #pending: Pending[] = []
  #failure: Error | undefined
  #ended = false

  /** `path` must not exist yet; an existing file is removed first (the debris of an earlier attempt). */
  constructor(
    readonly path: string,
    options: BulkLoaderOptions,
  ) {
    rmSync(path, { force: true })
    this.#worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { driver: SQLITE_DRIVER, path, ...options },
      // Its garbage is each batch's small arrays: the default young generation (48 MB) would only add to RSS.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    })
    this.#worker.on('message', (reply: { result?: unknown; error?: string }) => {
      const pending = this.#pending.shift()
      if (reply.error !== undefined) pending?.reject(new Error(reply.error))
      else pending?.resolve(reply.result)
    })
    const died = (error: Error) => {
      // The thread died (it could not create the file, ran out of memory…): fail what it held and whatever
      // comes after.
      this.#failure ??= error
      for (const pending of this.#pending.splice(0)) pending.reject(this.#failure)
    }
    this.#worker.on('error', died)
    this.#worker.on('exit', () => died(new Error('the thread writing the release stopped')))
  }

  /** Runs the ops in the load's transaction. `bytes` must have an ArrayBuffer of its own: it is transferred. */
  async write(ops: LoadOps, bytes: Uint8Array): Promise<void> {
    await this.#send({ action: 'write', ops, bytes }, [bytes.buffer as ArrayBuffer])
  }

  /** Commits the rows written. */
  async loaded(): Promise<void> {
    await this.#send({ action: 'loaded' })
  }

  /**
   * Runs statements. There is no journal: one that fails midway leaves the file unusable, so a failure
   * ends the load (abort()).
   */
  async exec(sql: string): Promise<void> {
    await this.#send({ action: 'exec', sql })
  }

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.#send({ action: 'all', sql, params })) as T[]
  }

  /** Closes and fsyncs the file, and ends the thread. */
  async close(): Promise<void> {
    await this.#send({ action: 'close' })
    await this.#end()
  }

  /** Ends the thread after what it holds, if it still runs, and removes the file (closed or not) and its side files. */
  async abort(): Promise<void> {
    if (!this.#ended) {
      await this.#send({ action: 'abort' }).catch(() => undefined)
      await this.#end()
    }
    for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${this.path}${suffix}`, { force: true })
  }

  async #end(): Promise<void> {
    this.#ended = true
    this.#failure ??= new Error('the thread writing the release has ended')
    await this.#worker.terminate()
  }

  #send(
    message: { action: string; [field: string]: unknown },
    transfer: ArrayBuffer[] = [],
  ): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject })
      this.#worker.postMessage(message, transfer)
    })
  }
}
