import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'
import { type Config, defineSetting, settingOf } from '../config.js'
import { chrtIdle } from '../threadPriority.js'

/** Niceness of an import: below `svc serve` (0), so that serving gets the CPU first when both want it. */
const IMPORT_NICENESS = 10
/** Niceness of an `idle` import where the platform cannot run it under the idle policy. */
const IDLE_FALLBACK_NICENESS = 19

type ImportPriority = 'low' | 'idle'

/** What an `idle` import says, and `svc serve` as it starts, where the idle policy cannot be had. */
const IDLE_UNAVAILABLE = 'importPriority idle needs chrt (util-linux) and a platform that allows SCHED_IDLE'

/**
 * How an import shares the CPU with serving. `low` (niceness 10) lets it take a share even of a busy machine;
 * `idle` runs it only on CPU time nothing else wants (Linux's SCHED_IDLE policy): a server woken by a request
 * takes the CPU at once, rather than after the import's time slice, at the price of a slower import under load
 * and none at all while serving keeps every core busy.
 */
export const IMPORT_PRIORITY = defineSetting<ImportPriority>({
  name: 'importPriority',
  env: 'SVC_IMPORT_PRIORITY',
  rule: (z) => z.enum(['low', 'idle'], { error: 'must be low or idle' }),
  fallback: 'low',
})

/**
 * The ids of this process's threads where the platform lists them (Linux), else 0: this process. Linux keeps
 * a nice value per thread, so lowering "the process" lowers only the calling thread: V8's platform threads
 * (garbage collection, compilation), started before any command runs, would keep competing at full priority
 * (a quarter of a core during a sync, measured with `ps -L`). Threads started later inherit it.
 */
function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number)
  } catch {
    return [0]
  }
}

function niceEveryThread(niceness: number): void {
  for (const thread of threadIds()) {
    try {
      setPriority(thread, niceness)
    } catch {
      // Not allowed here, or the thread ended since it was listed.
    }
  }
}

/**
 * Lowers this process's CPU priority for the rest of its run, as `importPriority` says. Imports run beside a
 * serving `svc serve` on the same few cores (its background sync, an operator's cron job): without this the
 * kernel shares the CPU evenly, and serving loses a third of its throughput while a sync runs. On an idle
 * machine it changes nothing. Returns a warning when `idle` could not be had (the import then runs at
 * niceness 19).
 */
export function yieldToServing(config: Config): string | undefined {
  if (settingOf(config, IMPORT_PRIORITY) !== 'idle') {
    niceEveryThread(IMPORT_NICENESS)
    return undefined
  }
  // Every thread of this process; threads started later inherit it.
  if (chrtIdle(['--all-tasks', '--pid', '0', String(process.pid)])) return undefined
  niceEveryThread(IDLE_FALLBACK_NICENESS)
  return `${IDLE_UNAVAILABLE}; this import runs at niceness ${IDLE_FALLBACK_NICENESS}`
}

/**
 * For `svc serve` as it starts: a warning when `importPriority` is `idle` and imports here cannot have the
 * policy (tried on a throwaway `true`). Its syncs fall back to niceness 19 and each says so, but on a stderr
 * the server shows only when a sync fails: the operator learns it from the server's log instead.
 */
export function idlePriorityWarning(config: Config): string | undefined {
  if (settingOf(config, IMPORT_PRIORITY) !== 'idle' || chrtIdle(['0', 'true'])) return undefined
  return `${IDLE_UNAVAILABLE}; the publisher syncs this server runs will run at niceness ${IDLE_FALLBACK_NICENESS}`
}
