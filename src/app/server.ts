import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Clock } from '../clock.js'
import { type Config, withBoundPort } from '../config.js'
import { type Db, openStore } from '../db/open.js'
import { seriesIndex } from '../scheduling/seriesIndex.js'
import { ensureBundledTerminology } from '../terminology/bundled.js'
import type { UpstreamTuning } from '../upstream/client.js'
import { createApp } from './app.js'
import { answerClientErrors, MAX_HEADER_BYTES } from './clientError.js'

export interface RunningServer {
  url: string
  port: number
  server: Server
  /** The main database: accounts and domain data. */
  db: Db
  /** The live database (src/db/live.ts): usage counters, request log, keys' last use. */
  live: Db
  /** Writes what is held in memory now: unsettled usage leases and buffered request records. */
  flush(): Promise<void>
  close(): Promise<void>
}

/** Opens the store, starts the app on config.host:config.port and returns a handle that closes both. */
export async function startServer(
  config: Config,
  clock: Clock,
  options: {
    requestLogFlushMs?: number
    busyTimeoutMs?: number
    upstream?: UpstreamTuning
    batchBudgetMs?: number
  } = {},
): Promise<RunningServer> {
  const store = openStore(config, { busyTimeoutMs: options.busyTimeoutMs })
  const { db, live } = store
  // The usage counter waits for the live file's lock asynchronously; SQLite's busy handler would sleep
  // with the event loop stopped (src/accounts/usage.ts).
  live.pragma('busy_timeout = 0')
  // Reference terminology is loaded before the first request, so no answer depends on a load in progress.
  ensureBundledTerminology(db, clock())
  // Slot search holds every series in memory; load them now rather than on the first search.
  seriesIndex(db).refresh()
  // Listen before building the app so links derived from a port-0 config name the bound port.
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES })
  server.listen(config.port, config.host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const effective = withBoundPort(config, port)
  const app = createApp({
    db,
    live,
    config: effective,
    clock,
    requestLog: { flushEveryMs: options.requestLogFlushMs, busyTimeoutMs: options.busyTimeoutMs },
    usage: { busyTimeoutMs: options.busyTimeoutMs },
    upstream: options.upstream,
    batchBudgetMs: options.batchBudgetMs,
  })
  app.requestLog.start()
  app.usage.start()
  server.on('request', app.koa.callback())
  server.on('clientError', answerClientErrors({ log: app.requestLog, docsUrl: effective.docsUrl, clock }))
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    db,
    live,
    async flush() {
      // The log first: once its flush resolves its thread holds no lock on the live file, and settling
      // (on a connection that does not wait for the lock) cannot fail on SQLITE_BUSY because of it.
      await app.requestLog.flush()
      app.usage.settle()
    },
    async close() {
      server.closeIdleConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      // The log's writer thread first, so that settling the leases does not wait for its lock.
      await app.requestLog.stop()
      await app.usage.stop().catch(() => undefined)
      store.close()
    },
  }
}
