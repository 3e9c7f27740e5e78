import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** One statement run: the index of its SQL in the batch's `sql` list, and its positional parameters. */
export type WriteOp = [statement: number, params: unknown[]]

/** Write statements to run in one transaction; the SQL is listed once however many times it runs. */
export interface WriteBatch {
  sql: string[]
  ops: WriteOp[]
}

/**
 * The thread's whole program, plain JavaScript so that it starts the same from the built code and from the
 * TypeScript sources tests and benchmarks run (a worker cannot load those). It only executes: the SQL and
 * what to write stay with their domain on the main thread.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.path, { fileMustExist: true })
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs)
db.pragma('synchronous = NORMAL')
const prepared = new Map()
const statement = (sql) => {
  let found = prepared.get(sql)
  if (!found) prepared.set(sql, (found = db.prepare(sql)))
  return found
}
const run = db.transaction((sql, ops) => {
  const statements = sql.map(statement)
  return ops.map(([index, params]) => statements[index].run(...params).changes)
})
parentPort.on('message', ({ id, batch }) => {
  try {
    const { sql, ops } = JSON.parse(batch)
    parentPort.postMessage({ id, changes: run.immediate(sql, ops) })
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) })
  }
})
`

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

interface Pending {
  resolve(changes: number[]): void
  reject(error: Error): void
}

/**
 * A thread of its own that writes batches to one SQLite file in IMMEDIATE transactions, so that writing
 * them (and waiting for another process's lock) never holds up the event loop. The file must exist with
 * its schema: open it with openStore first.
 */
export class WriterThread {
  #worker: Worker | undefined
  #nextId = 1
  readonly #pending = new Map<number, Pending>()

  constructor(
    private readonly path: string,
    private readonly options: { busyTimeoutMs?: number } = {},
  ) {}

  /** Runs the batch in one transaction; resolves with each op's changed-row count, rejects if not written. */
  run(batch: WriteBatch): Promise<number[]> {
    this.#worker ??= this.#start()
    const id = this.#nextId++
    const worker = this.#worker
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      // As one JSON string: cloning a string is a copy, cloning hundreds of small arrays costs more.
      worker.postMessage({ id, batch: JSON.stringify(batch) })
    })
  }

  /** Stops the thread; call once the batches sent have settled. */
  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }

  #start(): Worker {
    const worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { driver: DRIVER, path: this.path, busyTimeoutMs: this.options.busyTimeoutMs ?? 5000 },
    })
    worker.on('message', (reply: { id: number; changes?: number[]; error?: string }) => {
      const pending = this.#pending.get(reply.id)
      this.#pending.delete(reply.id)
      if (reply.error !== undefined) pending?.reject(new Error(reply.error))
      else pending?.resolve(reply.changes ?? [])
    })
    worker.on('error', (error) => {
      // The thread died (it could not open the file, say): fail what it held; the next batch starts anew.
      if (this.#worker === worker) this.#worker = undefined
      for (const pending of this.#pending.values()) pending.reject(error)
      this.#pending.clear()
    })
    return worker
  }
}
