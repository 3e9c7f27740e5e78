import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

/**
 * Whom a thread waited behind for a CPU: the scheduler's events of the whole machine recorded with `perf
 * sched record` over a while, then, each time the thread is switched in after being runnable (woken, or
 * preempted while running), the task it took the CPU from, by process. The soak's `--sched`: schedstat says how
 * long serving waited, not behind what. Linux with perf, allowed to trace the scheduler (root, or
 * kernel.perf_event_paranoid low enough).
 */
export interface SchedRecording {
  /** Stops recording and says, for thread `tid`, the seconds recorded and its waits by the name of `nameOf`. */
  stop(tid: number, nameOf: (pid: number) => string): Promise<SchedWaits>
}

export interface SchedWaits {
  seconds: number
  /** Seconds runnable but not running, by the process name of the task that held the CPU it then got. */
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
    async stop(tid, nameOf) {
      perf.kill('SIGINT')
      await ended
      return waitsBehind(spawn('perf', ['script', '-i', file, '-F', 'pid,tid,time,event,trace']), tid, nameOf)
    },
  }
}

// `perf script -F pid,tid,time,event,trace`: "  <pid>/<tid>  <seconds>: sched:<event>: <fields>".
const LINE = /^\s*(\d+)\/\d+\s+([\d.]+):\s+sched:(sched_waking|sched_switch):\s+(.*)$/
const SWITCH = /prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(\d+)/
const WAKING = / pid=(\d+) /

async function waitsBehind(
  script: ChildProcess,
  tid: number,
  nameOf: (pid: number) => string,
): Promise<SchedWaits> {
  const behind = new Map<string, number>()
  let first: number | undefined
  let last = 0
  // Since when the thread has been runnable without running; undefined while it runs or sleeps.
  let runnableSince: number | undefined
  for await (const line of createInterface({ input: script.stdout as NodeJS.ReadableStream })) {
    const event = LINE.exec(line)
    if (!event) continue
    const [, pid, at, kind, fields] = event as unknown as [string, string, string, string, string]
    const time = Number(at)
    first ??= time
    last = time
    if (kind === 'sched_waking') {
      if (Number(WAKING.exec(fields)?.[1]) === tid) runnableSince ??= time
      continue
    }
    const change = SWITCH.exec(fields)
    if (!change) continue
    const [, prev, prevState, next] = change as unknown as [string, string, string, string]
    if (Number(prev) === tid) runnableSince = prevState.startsWith('R') ? time : undefined
    if (Number(next) === tid && runnableSince !== undefined) {
      // The event is the CPU's: its pid is the process of the task switched out, the one waited behind.
      const name = nameOf(Number(pid))
      behind.set(name, (behind.get(name) ?? 0) + time - runnableSince)
      runnableSince = undefined
    }
  }
  return { seconds: first === undefined ? 0 : last - first, behind }
}
