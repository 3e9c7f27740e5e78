import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * The thread's whole program, plain JavaScript (see writerThread.ts for why). A PASSIVE checkpoint copies
 * committed WAL frames into the database file while the writer keeps appending; it never takes the write lock.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.path, { fileMustExist: true })
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs)
db.pragma('synchronous = NORMAL')
parentPort.on('message', () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
    parentPort.postMessage({})
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) })
  }
})
`

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

/**
 * Checkpoints one WAL-mode file on a thread of its own, so that a bulk writer's pages are copied into the
 * database file while it goes on writing, instead of the writer stopping for each auto-checkpoint.
 * The writer sets `wal_autocheckpoint = 0` on its connection while it uses this.
 */
export class CheckpointThread {
  readonly #worker: Worker
  /** The checkpoint under way; it resolves with its failure rather than rejecting, so none goes unhandled. */
  #running: Promise<Error | undefined> | undefined

  constructor(path: string, options: { busyTimeoutMs?: number } = {}) {
    this.#worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { driver: DRIVER, path, busyTimeoutMs: options.busyTimeoutMs ?? 5000 },
    })
  }

  /** Starts a checkpoint of what is committed now, unless one is already under way. */
  start(): void {
    this.#running ??= new Promise<Error | undefined>((resolve) => {
      const died = (error: Error) => resolve(error)
      this.#worker.once('error', died)
      this.#worker.once('message', (reply: { error?: string }) => {
        this.#worker.off('error', died)
        this.#running = undefined
        resolve(reply.error === undefined ? undefined : new Error(`checkpoint failed: ${reply.error}`))
      })
      this.#worker.postMessage(null)
    })
  }

  /** Checkpoints everything committed so far and waits for it: the WAL can then restart from its beginning. */
  async complete(): Promise<void> {
    const earlier = await this.#running
    if (earlier) throw earlier
    this.start()
    const failure = await this.#running
    if (failure) throw failure
  }

  async close(): Promise<void> {
    await this.#worker.terminate()
  }
}
