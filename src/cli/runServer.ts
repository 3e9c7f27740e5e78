import { clockFromEnv } from '../clock.js'
import type { Config } from '../config.js'
import { startServer } from '../http/server.js'

/** Starts the server and keeps it up until SIGINT/SIGTERM, then closes connections and the store cleanly. */
export async function runServerUntilSignalled(config: Config, log: (line: string) => void): Promise<void> {
  const server = await startServer(config, clockFromEnv())
  log(`svc listening on ${server.url} (database ${config.db})`)
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      server.close().then(resolve, resolve)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}
