import { Worker } from 'node:worker_threads'
import { SQLITE_DRIVER, THREAD_DRIVER } from './driverPath.js'

/** The thread's whole program, plain JavaScript for the same reason as writerThread.ts's. */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads')
${THREAD_DRIVER}
const db = setUp(() => {
  const db = new Database(workerData.path, { fileMustExist: true })
  db.pragma('busy_timeout = 5000')
  return db
})
parentPort.on('message', () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {
    // Left for the next checkpoint.
  }
  parentPort.postMessage(null)
})
`

/**
 * Copies a file's committed WAL pages into the file on a thread of its own, so that a writer committing one
 * large transaction after another (a sync of many publishers) goes on to the next instead of checkpointing
 * each: the writer's connection turns its automatic checkpoints off while this runs, asks for a checkpoint
 * after each commit (`request`), and asks again and waits (`settled`) before it begins a transaction, so
 * that the WAL starts over from its beginning and stays about one transaction long.
 */
export class CheckpointThread {
  #worker: Worker | undefined
  /** Resolvers of the checkpoints asked and not yet answered, oldest first (the thread answers in order). */
  readonly #waiting: (() => void)[] = []
  #last: Promise<void> = Promise.resolve()

  constructor(private readonly path: string) {}

  /** Starts a passive checkpoint of what is committed now, after those asked before it. */
  request(): void {
    const worker = (this.#worker ??= this.#start())
    this.#last = new Promise((resolve) => this.#waiting.push(resolve))
    worker.postMessage(null)
  }

  /** Resolves once every checkpoint requested has run (or failed: its pages stay for the next one). */
  settled(): Promise<void> {
    return this.#last
  }

  /** Waits for the checkpoints requested, then stops the thread. */
  async close(): Promise<void> {
    await this.#last
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }

  #start(): Worker {
    const worker = new Worker(PROGRAM, { eval: true, workerData: { driver: SQLITE_DRIVER, path: this.path } })
    // A checkpoint that fails (the file busy) leaves its pages in the WAL for the next one, or SQLite's own.
    worker.on('message', () => this.#waiting.shift()?.())
    worker.on('error', () => {
      if (this.#worker === worker) this.#worker = undefined
      for (const resolve of this.#waiting.splice(0)) resolve()
    })
    return worker
  }
}
