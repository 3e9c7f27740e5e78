import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AppContext, DomainServing } from '../api/domain.js'
import type { Endpoint } from '../api/endpoint.js'
import { Ports } from '../api/ports.js'
import type { Clock } from '../clock.js'
import { type Config, hostInUrl, settingOf, withBoundPort } from '../config.js'
import type { Db } from '../db/open.js'
import { docsEndpoints } from '../docs/endpoints.js'
import { fhirBaseEndpoints, type MetadataModes, withFormat } from '../fhir/endpoints.js'
import { createApp } from '../http/app.js'
import { answerClientErrors, MAX_HEADER_BYTES } from '../http/clientError.js'
import { MAX_CONNECTIONS } from '../http/settings.js'
import type { Routes } from '../http/routes.js'
import { type UpstreamTuning, upstreamTuning } from '../upstream/client.js'
import { UPSTREAM_DEADLINE_S } from '../upstream/settings.js'
import { UserError } from '../userError.js'
import { webPages } from '../dashboard/middleware.js'
import { dashboardDeps } from './dashboard.js'
import { DOMAINS } from './domains.js'
import { openStore } from './store.js'

export interface RunningServer {
  url: string
  port: number
  server: Server
  /** The main database: accounts and domain data. */
  db: Db
  /** The live database (src/db/live.ts): usage counters, request log, keys' last use. */
  live: Db
  /** Every endpoint served, as routed. */
  routes: Routes
  /** Writes what is held in memory now: unsettled usage leases and buffered request records. */
  flush(): Promise<void>
  close(): Promise<void>
}

/** How long an idle kept-alive connection stays open. */
export const KEEP_ALIVE_MS = 65_000

/**
 * How much of the main file the serving connection maps (SQLite caps it at its build's limit, 2 GB here).
 * Mapped pages are the OS's page cache, shared and given back under pressure, not the process's heap.
 */
const MAIN_MMAP_BYTES = 2 ** 31

/** What each domain serves, loaded once per process. */
async function loadServings(): Promise<DomainServing[]> {
  const servings = await Promise.all(DOMAINS.map((domain) => domain.serving?.()))
  return servings.filter((serving) => serving !== undefined)
}

/**
 * Every domain's state, made for this app and warmed up, and every endpoint served: the open pages, the FHIR
 * base's own (with the domains' metadata modes), then each domain's.
 */
function composeEndpoints(servings: DomainServing[], app: AppContext): Endpoint[] {
  const modes: MetadataModes = {}
  const domainEndpoints: Endpoint[] = []
  for (const serving of servings) {
    const state = serving.createState(app)
    serving.warmUp?.(state)
    Object.assign(modes, serving.metadataModes?.(state))
    domainEndpoints.push(...serving.endpoints(state))
  }
  return [...docsEndpoints, ...fhirBaseEndpoints(modes), ...domainEndpoints].map(withFormat)
}

/** Why the server cannot listen where it was told to, in words an operator can act on. */
function listenFailure(error: NodeJS.ErrnoException, config: Config): Error {
  const address = `${hostInUrl(config.host)}:${config.port}`
  const reasons: Record<string, string> = {
    EADDRINUSE:
      'the address is in use (another svc serve or svc demo?); choose another port with --port or SVC_PORT',
    EACCES: 'not permitted (a port below 1024 needs privileges); choose another port with --port or SVC_PORT',
    EADDRNOTAVAIL: `this machine has no address ${config.host}; check --host or SVC_HOST`,
  }
  const reason = (error.code && reasons[error.code]) ?? error.message
  return new UserError(`Cannot listen on ${address}: ${reason}`)
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
    bodyTimeoutMs?: number
  } = {},
): Promise<RunningServer> {
  const servings = await loadServings()
  const store = openStore(config, { busyTimeoutMs: options.busyTimeoutMs })
  const { db, live } = store
  // The usage counter waits for the live file's lock asynchronously; SQLite's busy handler would sleep
  // with the event loop stopped (src/accounts/usage.ts).
  live.pragma('busy_timeout = 0')
  // A commit past 1,000 pages of WAL checkpoints the file in the committing connection, fsyncs included: on the
  // event loop, behind an import's writes, one such fsync held every request for 200-270 ms (bench soak, 3 of
  // about 20 runs). These connections never checkpoint: the request log's writer thread does the live file's (it
  // commits every flush), the imports and syncs the main file's.
  live.pragma('wal_autocheckpoint = 0')
  db.pragma('wal_autocheckpoint = 0')
  // Searches read pages all over a national store (a hundred NPIs' series, a page's slots a seek each):
  // mapped, a page not in the connection's cache is read from the OS's without a system call and a copy.
  db.pragma(`mmap_size = ${MAIN_MMAP_BYTES}`)
  // Listen before building the app so links derived from a port-0 config name the bound port.
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    // Longer than the idle timeout of the proxies and load balancers in front (60 s is common), so that
    // the server never closes a kept-alive connection just as the proxy sends a request on it.
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: KEEP_ALIVE_MS + 1_000,
  })
  server.maxConnections = settingOf(config, MAX_CONNECTIONS) ?? 2000
  server.listen(config.port, config.host)
  try {
    await once(server, 'listening')
  } catch (error) {
    store.close()
    throw listenFailure(error as NodeJS.ErrnoException, config)
  }
  const { port } = server.address() as AddressInfo
  const effective = withBoundPort(config, port)
  // From here to the request listener nothing waits: no request is read before the app can answer it.
  const endpoints = composeEndpoints(servings, {
    db,
    config: effective,
    clock,
    upstream: { ...upstreamTuning(effective), ...options.upstream },
    ports: new Ports(),
  })
  const app = createApp({
    db,
    live,
    config: effective,
    clock,
    endpoints,
    requestLog: { flushEveryMs: options.requestLogFlushMs, busyTimeoutMs: options.busyTimeoutMs },
    usage: { busyTimeoutMs: options.busyTimeoutMs },
    batchBudgetMs: options.batchBudgetMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    upstreamDeadlineMs: (settingOf(effective, UPSTREAM_DEADLINE_S) ?? 30) * 1000,
    pages: webPages(dashboardDeps({ db, live }, effective, clock, (line) => console.error(line))),
  })
  app.requestLog.start()
  app.usage.start()
  server.on('request', app.koa.callback())
  server.on('clientError', answerClientErrors({ log: app.requestLog, docsUrl: effective.docsUrl, clock }))
  return {
    url: `http://${hostInUrl(config.host)}:${port}`,
    port,
    server,
    db,
    live,
    routes: app.routes,
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
