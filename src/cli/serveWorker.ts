import type { Config } from '../config.js'
import { runServerUntilSignalled } from './runServer.js'

/**
 * A worker of `svc serve --workers <n>` (src/cli/workers.ts): it gets the resolved configuration from its
 * primary over IPC (never the environment: it holds credentials), serves on the listening address the
 * primary shares with every worker, says when it listens, and closes cleanly when asked.
 */
export type WorkerMessage = { kind: 'ready' } | { kind: 'listening'; baseUrl: string; url: string }
export type PrimaryMessage = { kind: 'config'; config: SerializedConfig } | { kind: 'stop' }
export type SerializedConfig = Omit<Config, 'settings'> & { settings: [string, unknown][] }

let stop: (() => void) | undefined
let stopAsked = false
let started = false
process.on('message', (message: PrimaryMessage) => {
  if (message.kind === 'stop') {
    stopAsked = true
    // Asked to stop before it serves (another worker failed to start): nothing to close.
    if (stop) stop()
    else if (!started) process.exit(0)
    return
  }
  if (started) return
  started = true
  const config: Config = { ...message.config, settings: new Map(message.config.settings) }
  runServerUntilSignalled(config, {
    log: () => undefined,
    onListening: (baseUrl, url) =>
      process.send?.({ kind: 'listening', baseUrl, url } satisfies WorkerMessage),
    stopOn: (resolve) => {
      stop = resolve
      // A stop asked for while the server was starting is carried out once it can be.
      if (stopAsked) resolve()
    },
  }).then(
    () => process.exit(0),
    (error: Error) => {
      console.error(`svc serve worker ${process.pid}: ${error.message}`)
      process.exit(1)
    },
  )
})
// Asked for once listening for it: a message sent as the process came up would arrive before this module runs.
process.send?.({ kind: 'ready' } satisfies WorkerMessage)
