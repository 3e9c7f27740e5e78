import { clockFromEnv } from '../clock.js'
import { type Config, withBoundPort } from '../config.js'
import { startServer } from '../app/server.js'
import { type SyncSchedule, startSyncSchedule } from '../scheduling/sync/schedule.js'

export interface BackgroundSync {
  intervalMs: number
  /** The `svc` executable to run `import publishers` with. */
  bin: string
}

/** Starts the server and keeps it up until SIGINT/SIGTERM, then closes connections and the store cleanly. */
export async function runServerUntilSignalled(
  config: Config,
  log: (line: string) => void,
  sync?: BackgroundSync,
  /** Told the base URL callers reach once it listens (a `--port 0` server's port is known only then). */
  onListening?: (baseUrl: string) => void,
): Promise<void> {
  const server = await startServer(config, clockFromEnv())
  onListening?.(withBoundPort(config, Number(new URL(server.url).port)).baseUrl)
  log(`svc listening on ${server.url} (database ${config.db})`)
  let schedule: SyncSchedule | undefined
  if (sync && sync.intervalMs > 0) {
    schedule = startSyncSchedule({
      intervalMs: sync.intervalMs,
      command: [process.execPath, sync.bin, 'import', 'publishers', '--db', config.db],
      log,
    })
    log(`publishers sync every ${sync.intervalMs / 1000}s`)
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      Promise.all([schedule?.stop(), server.close()]).then(() => resolve(), resolve)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}
