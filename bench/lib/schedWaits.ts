import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

/**
 * Whom threads waited behind for a CPU: the scheduler's events of the whole machine recorded with `perf
 * sched record` over a while, then, each time one of the threads is switched in after being runnable (woken,
 * or preempted while running), the task it took the CPU from, by process. The soak's `--sched`: schedstat says how
 * long serving waited, not behind what. Linux with perf, allowed to trace the scheduler (root, or
 * kernel.perf_event_paranoid low enough).
 */
export interface SchedRecording {
  /** Stops recording and says the seconds recorded and the waits of threads `tids`, by the name of `nameOf`. */
  stop(tids: readonly number[], nameOf: (pid: number) => string): Promise<SchedWaits>
}

export interface SchedWaits {
  seconds: number
  /** Seconds runnable but not running (summed over the threads), by the name of the process of the task that held the CPU then got. */
  behind: Map<string, number>
}

/** Fails at once, rather than after the soak's setup, where perf cannot record the scheduler. */
export function checkSchedRecording(): void {
  try {
    execFileSync('perf', ['sched', 'record', '-a', '-q', '-o', '/dev/null', '--', 'true'], {
      stdio: 'ignore',
    })
  } catch {
    throw new Error(
      '--sched needs perf, allowed to record scheduler events (root, or a low perf_event_paranoid)',
    )
  }
}

export function recordSched(file: string): SchedRecording {
  const perf = spawn('perf', ['sched', 'record', '-a', '-q', '-o', file], { stdio: 'ignore' })
  const ended = once(perf, 'exit')
  return {
    async stop(tids, nameOf) {
      perf.kill('SIGINT')
      await ended
      return waitsBehind(
        spawn('perf', ['script', '-i', file, '-F', 'pid,tid,time,event,trace']),
        tids,
        nameOf,
      )
    },
  }
}

// `perf script -F pid,tid,time,event,trace`: "  <pid>/<tid>  <seconds>: sched:<event>: <fields>".
const LINE = /^\s*(\d+)\/\d+\s+([\d.]+):\s+sched:(sched_waking|sched_switch):\s+(.*)$/
const SWITCH = /prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(\d+)/
const WAKING = / pid=(\d+) /

async function waitsBehind(
  script: ChildProcess,
  tids: readonly number[],
  nameOf: (pid: number) => string,
): Promise<SchedWaits> {
  const behind = new Map<string, number>()
  let first: number | undefined
  let last = 0
  // Per thread, since when it has been runnable without running; absent while it runs or sleeps.
  const runnableSince = new Map<number, number>()
  const watched = new Set(tids)
  for await (const line of createInterface({ input: script.stdout as NodeJS.ReadableStream })) {
    const event = LINE.exec(line)
    if (!event) continue
    const [, pid, at, kind, fields] = event as unknown as [string, string, string, string, string]
    const time = Number(at)
    first ??= time
    last = time
    if (kind === 'sched_waking') {
      const woken = Number(WAKING.exec(fields)?.[1])
      if (watched.has(woken) && !runnableSince.has(woken)) runnableSince.set(woken, time)
      continue
    }
    const change = SWITCH.exec(fields)
    if (!change) continue
    const [prev, next] = [Number(change[1]), Number(change[3])]
    if (watched.has(prev)) {
      if (change[2]?.startsWith('R')) runnableSince.set(prev, time)
      else runnableSince.delete(prev)
    }
    const since = runnableSince.get(next)
    if (since !== undefined) {
      // The event is the CPU's: its pid is the process of the task switched out, the one waited behind.
      const name = nameOf(Number(pid))
      behind.set(name, (behind.get(name) ?? 0) + time - since)
      runnableSince.delete(next)
    }
  }
  return { seconds: first === undefined ? 0 : last - first, behind }
}
