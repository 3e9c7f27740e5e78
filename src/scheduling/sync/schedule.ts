import { type ChildProcess, spawn } from 'node:child_process'
import type { Config } from '../../config.js'

export interface SyncSchedule {
  stop(): Promise<void>
}

/**
 * The argv of `svc import publishers` (of one publisher, when named) on the store and configuration file of
 * `config`: a sync started by the server reads the limits and allowed hosts the operator configured, even when
 * the file was given to `svc serve` by flag rather than by SVC_CONFIG, which the child would inherit.
 */
export function importPublishersCommand(config: Config, bin: string, publisher?: string): string[] {
  return [
    process.execPath,
    bin,
    'import',
    'publishers',
    ...(publisher === undefined ? [] : ['--publisher', publisher]),
    '--db',
    config.db,
    ...(config.configFile ? ['--config', config.configFile] : []),
  ]
}

/**
 * Keeps publishers fresh from inside `svc serve` by running `svc import publishers` as a child process on
 * a timer. A child, not the server's own thread: better-sqlite3 is synchronous, so an import in-process would
 * stall every request while it parses and writes, and its memory would stay with the server.
 */
export function startSyncSchedule(options: {
  intervalMs: number
  /** argv of the import command (importPublishersCommand). */
  command: string[]
  log: (line: string) => void
}): SyncSchedule {
  let running: ChildProcess | undefined
  // A sync stopped with the server exits as interrupted: not a failure to report with its output.
  let stopping = false
  const run = () => {
    if (running) return // the previous sync is still going: skip this tick rather than pile up
    running = runSync(
      options.command,
      (line) => {
        if (!stopping) options.log(line)
      },
      () => (running = undefined),
    )
  }
  run()
  const timer = setInterval(run, options.intervalMs)
  timer.unref()
  return {
    stop: async () => {
      clearInterval(timer)
      const child = running
      if (!child || child.exitCode !== null) return
      stopping = true
      await new Promise<void>((resolve) => {
        child.once('close', () => resolve())
        child.kill('SIGTERM')
      })
      options.log(
        'publisher sync stopped with the server; the publishers it had not finished sync at its next run',
      )
    },
  }
}

/**
 * Runs one `svc import publishers` child (argv in `command`); what it printed reaches `log` only when it
 * fails. Also how the dashboard's *Sync now* runs a publisher's sync.
 */
export function runSync(
  command: readonly string[],
  log: (line: string) => void,
  onClose?: () => void,
): ChildProcess {
  const [executable, ...args] = command
  const child = spawn(executable as string, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', (chunk) => (output += chunk))
  child.stderr?.on('data', (chunk) => (output += chunk))
  child.on('error', (error) => log(`publisher sync could not start: ${error.message}`))
  child.on('close', (code) => {
    onClose?.()
    if (code !== 0) log(`publisher sync exited ${code}:\n${output.trim()}`)
  })
  return child
}
