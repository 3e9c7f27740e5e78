import { clockFromEnv } from '../clock.js'
import { type Config, withBoundPort } from '../config.js'
import { startServer } from '../app/server.js'
import { idlePriorityWarning } from './priority.js'
import { importPublishersCommand, type SyncSchedule, startSyncSchedule } from '../scheduling/sync/schedule.js'

export interface BackgroundSync {
  intervalMs: number
  /** The `svc` executable to run `import publishers` with. */
  bin: string
}

export interface ServeOptions {
  log: (line: string) => void
  sync?: BackgroundSync
  /**
   * Told the base URL callers reach, and the address it listens on, once it listens (a `--port 0` server's
   * port is known only then).
   */
  onListening?: (baseUrl: string, url: string) => void
  /** Other ways to be told to stop, beside SIGINT and SIGTERM (a worker's primary asks over IPC). */
  stopOn?: (stop: () => void) => void
}

/** The background publishers sync of `svc serve`, run as child `svc import publishers` processes. */
export function startBackgroundSync(
  config: Config,
  sync: BackgroundSync | undefined,
  log: (line: string) => void,
): SyncSchedule | undefined {
  if (!sync || sync.intervalMs <= 0) return undefined
  const schedule = startSyncSchedule({
    intervalMs: sync.intervalMs,
    command: importPublishersCommand(config, sync.bin),
    log,
  })
  const warning = idlePriorityWarning(config)
  if (warning) log(warning)
  log(`publishers sync every ${sync.intervalMs / 1000}s`)
  return schedule
}

/** Resolves on the first SIGINT or SIGTERM (or other stop asked for); later ones are absorbed, not fatal. */
export function untilStopped(stopOn?: (stop: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    // The listeners stay: a second signal (a terminal's Ctrl-C reaches every process of the group, then
    // a primary asks its workers too) must not kill a process that is closing cleanly.
    process.on('SIGINT', () => resolve())
    process.on('SIGTERM', () => resolve())
    stopOn?.(resolve)
  })
}

/** Starts one server and keeps it up until told to stop, then closes connections and the store cleanly. */
export async function runServerUntilSignalled(config: Config, options: ServeOptions): Promise<void> {
  const server = await startServer(config, clockFromEnv())
  options.onListening?.(withBoundPort(config, Number(new URL(server.url).port)).baseUrl, server.url)
  options.log(`svc listening on ${server.url} (database ${config.db})`)
  const schedule = startBackgroundSync(config, options.sync, options.log)
  await untilStopped(options.stopOn)
  await Promise.all([schedule?.stop(), server.close()]).catch(() => undefined)
}
