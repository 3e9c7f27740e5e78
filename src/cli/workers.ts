import cluster, { type Worker } from 'node:cluster'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '../app/store.js'
import type { Config } from '../config.js'
import { UserError } from '../userError.js'
import { type BackgroundSync, startBackgroundSync, untilStopped } from './runServer.js'
import type { PrimaryMessage, WorkerMessage } from './serveWorker.js'

type Listening = Extract<WorkerMessage, { kind: 'listening' }>

/** A worker that dies is started again after this long (a worker that cannot start fails the command). */
const RESTART_DELAY_MS = 1000
/** A worker asked to stop that has not closed after this long is killed. */
const STOP_GRACE_MS = 15_000

/**
 * `svc serve --workers <n>`: n server processes on one listening address (node:cluster hands each new
 * connection to the next worker), sharing the store as separate `svc serve` processes do, so plan limits
 * stay exact across them and `svc top` sees every request. This primary serves nothing: it runs the schema
 * steps once, starts the workers, runs the background publishers sync (once, not per worker), starts a
 * worker again when one dies, and on SIGINT/SIGTERM asks each to close cleanly and waits for them.
 */
export async function runWorkers(
  config: Config,
  count: number,
  options: {
    log: (line: string) => void
    sync?: BackgroundSync
    onListening?: (baseUrl: string, url: string) => void
  },
): Promise<void> {
  openDatabase(config.db).close()
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./serveWorker.js', import.meta.url)) })
  const message: PrimaryMessage = {
    kind: 'config',
    config: { ...config, settings: [...config.settings] },
  }
  /**
   * A message to a worker that is exiting at that moment (it could not listen) cannot be delivered; without a
   * callback that failure is an 'error' event nobody listens to, which ended the primary with exit 1 instead
   * of the worker's reason. The worker's exit is what is handled.
   */
  const ignoreGone = () => undefined
  let stopping = false
  const restarts = new Set<NodeJS.Timeout>()
  const start = (): Promise<{ worker: Worker; said: Listening }> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork()
      const failed = (code: number | null, signal: string | null) =>
        reject(
          new UserError(
            `An svc serve worker could not start (${signal ?? `exit ${code}`}); see its error above`,
          ),
        )
      worker.once('exit', failed)
      worker.on('message', (said: WorkerMessage) => {
        if (said.kind === 'ready')
          worker.send(stopping ? ({ kind: 'stop' } satisfies PrimaryMessage) : message, ignoreGone)
        if (said.kind !== 'listening') return
        worker.off('exit', failed)
        worker.once('exit', (code, signal) => {
          if (stopping) return
          options.log(
            `svc serve worker ${worker.process.pid} ended (${signal ?? `exit ${code}`}); starting another`,
          )
          const timer = setTimeout(() => {
            restarts.delete(timer)
            if (!stopping) start().catch((error: Error) => options.log(error.message))
          }, RESTART_DELAY_MS)
          restarts.add(timer)
        })
        resolve({ worker, said })
      })
    })
  const stopWorkers = () =>
    Promise.all(
      Object.values(cluster.workers ?? {}).map(
        (worker) =>
          new Promise<void>((done) => {
            if (!worker || worker.isDead()) return done()
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS)
            worker.once('exit', () => {
              clearTimeout(kill)
              done()
            })
            if (worker.isConnected()) worker.send({ kind: 'stop' } satisfies PrimaryMessage, ignoreGone)
          }),
      ),
    )
  let started: { worker: Worker; said: Listening }[]
  try {
    started = await Promise.all(Array.from({ length: count }, start))
  } catch (error) {
    stopping = true
    await stopWorkers()
    throw error
  }
  const { baseUrl, url } = (started[0] as { said: Listening }).said
  options.log(`svc listening on ${url} (database ${config.db}; ${count} worker processes)`)
  options.onListening?.(baseUrl, url)
  const schedule = startBackgroundSync(config, options.sync, options.log)
  await untilStopped()
  stopping = true
  for (const timer of restarts) clearTimeout(timer)
  await Promise.all([schedule?.stop(), stopWorkers()])
}
