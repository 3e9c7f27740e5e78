import { Worker } from 'node:worker_threads'
import { SQLITE_DRIVER, THREAD_DRIVER } from './driverPath.js'

/** One statement run: the index of its SQL in the batch's `sql` list, and its positional parameters. */
export type WriteOp = [statement: number, params: unknown[]]

/**
 * One parameter of a statement run once per row: numbers (NaN is written as NULL: SQLite binds it so
 * anyway), text as it comes, or text coded as indexes into `words` (a negative code is NULL), for values
 * most rows repeat.
 */
export type Column = Float64Array | (string | null)[] | { words: string[]; codes: Int32Array }

/** A statement run once for each of `count` rows, its parameters given column by column. */
export interface RowsOp {
  statement: number
  count: number
  columns: Column[]
}

/**
 * Write statements to run in one transaction, `rows` first, then `ops`; the SQL is listed once however many
 * times it runs. Many rows go as columns: cloning a few typed arrays and short lists to the thread costs a
 * fraction of what serializing an array of parameters per row does.
 */
export interface WriteBatch {
  sql: string[]
  rows?: RowsOp[]
  ops: WriteOp[]
}

/**
 * The thread's whole program, plain JavaScript so that it starts the same from the built code and from the
 * TypeScript sources tests and benchmarks run (a worker cannot load those). It only executes: the SQL and
 * what to write stay with their domain on the main thread.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads')
${THREAD_DRIVER}
const db = setUp(() => {
  const db = new Database(workerData.path, { fileMustExist: true })
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs)
  db.pragma('synchronous = NORMAL')
  return db
})
const prepared = new Map()
const statement = (sql) => {
  let found = prepared.get(sql)
  if (!found) prepared.set(sql, (found = db.prepare(sql)))
  return found
}
const reader = (column) => {
  if (column instanceof Float64Array) return (i) => column[i]
  if (Array.isArray(column)) return (i) => column[i]
  const { words, codes } = column
  return (i) => (codes[i] < 0 ? null : words[codes[i]])
}
const run = db.transaction((sql, rows, ops) => {
  const statements = sql.map(statement)
  for (const { statement: index, count, columns } of rows) {
    const target = statements[index]
    const readers = columns.map(reader)
    const params = new Array(readers.length)
    for (let row = 0; row < count; row++) {
      for (let p = 0; p < readers.length; p++) params[p] = readers[p](row)
      target.run(params)
    }
  }
  return ops.map(([index, params]) => statements[index].run(...params).changes)
})
parentPort.on('message', ({ id, batch }) => {
  try {
    parentPort.postMessage({ id, changes: run.immediate(batch.sql, batch.rows ?? [], batch.ops) })
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) })
  }
})
`

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

  /**
   * Runs the batch in one transaction; resolves with each of `ops`' changed-row counts, rejects if not
   * written. The batch is copied to the thread at once: the caller may keep it (to send again) or reuse it.
   */
  run(batch: WriteBatch): Promise<number[]> {
    this.#worker ??= this.#start()
    const id = this.#nextId++
    const worker = this.#worker
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      worker.postMessage({ id, batch })
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
      workerData: {
        driver: SQLITE_DRIVER,
        path: this.path,
        busyTimeoutMs: this.options.busyTimeoutMs ?? 5000,
      },
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
