import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** Niceness of an import: below `svc serve` (0), so that serving gets the CPU first when both want it. */
export const IMPORT_NICENESS = 10

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

/**
 * Lowers this process's CPU priority for the rest of its run. Imports run beside a serving `svc serve` on the
 * same few cores (its background sync, an operator's cron job): without this the kernel shares the CPU
 * evenly, and serving loses a third of its throughput while a sync runs. On an idle machine it changes
 * nothing. Where the platform refuses (no permission), a thread runs as it was started.
 */
export function yieldToServing(): void {
  for (const thread of threadIds()) {
    try {
      setPriority(thread, IMPORT_NICENESS)
    } catch {
      // Not allowed here, or the thread ended since it was listed.
    }
  }
}
