import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

/**
 * One phase of load from a process of its own, started for that phase. A load generator that ran phase
 * after phase in one process grew slower by the minute (its CPU a request 34 -> 47 µs over five idle
 * phases of the soak, serving's flat): later phases were measured with a slower client than the first.
 */

export interface PhaseLoadOptions {
  url: string
  connections: number
  requests: autocannon.Request[]
  /** Seconds to run; undefined: until `stop`. */
  duration?: number
}

/** What a phase's load measured, and the CPU its process used while loading (every thread). */
export interface PhaseLoadResult {
  perSecond: number
  worstSecond: number
  p50: number
  p99: number
  max: number
  errors: number
  non2xx: number
  cpuSeconds: number
}

export interface LoadProcess {
  pid: number
  /** Starts the load; resolves with its figures once it ran its duration or was stopped. */
  run(options: PhaseLoadOptions): Promise<PhaseLoadResult>
  stop(): void
}

/** Starts the process and waits until it is ready to load (its modules loaded, nothing counted yet). */
export async function startLoadProcess(): Promise<LoadProcess> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: process.execArgv })
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code) => reject(new Error(`the load process exited (${code}) before loading`)))
  })
  return {
    pid: child.pid as number,
    run(options) {
      return new Promise((resolve, reject) => {
        child.removeAllListeners('exit')
        child.once('message', (result: PhaseLoadResult | { error: string }) =>
          'error' in result ? reject(new Error(result.error)) : resolve(result),
        )
        child.once('exit', (code) => reject(new Error(`the load process exited (${code})`)))
        child.send(options)
      })
    },
    // A process gone already (it failed) has nothing to stop: its run says why.
    stop: () => {
      if (child.connected) child.send('stop')
    },
  }
}

function serveLoad(): void {
  process.once('message', (options: PhaseLoadOptions) => {
    const before = process.cpuUsage()
    const tracker = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.duration ?? 3600,
        requests: options.requests,
      },
      (error, result) => {
        const used = process.cpuUsage(before)
        const answer = error
          ? { error: String(error) }
          : {
              perSecond: result.requests.mean,
              worstSecond: result.requests.min,
              p50: result.latency.p50,
              p99: result.latency.p99,
              max: result.latency.max,
              errors: result.errors + result.timeouts,
              non2xx: result.non2xx,
              cpuSeconds: (used.user + used.system) / 1e6,
            }
        process.send?.(answer, () => process.exit(0))
      },
    )
    process.on('message', (message) => {
      if (message === 'stop') tracker.stop()
    })
  })
  process.send?.('ready')
}

if (import.meta.url === `file://${process.argv[1]}`) serveLoad()
