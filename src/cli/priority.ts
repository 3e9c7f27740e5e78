import { setPriority } from 'node:os'

/** Niceness of an import: below `svc serve` (0), so that serving gets the CPU first when both want it. */
export const IMPORT_NICENESS = 10

/**
 * Lowers this process's CPU priority for the rest of its run. Imports run beside a serving `svc serve` on the
 * same few cores (its background sync, an operator's cron job): without this the kernel shares the CPU
 * evenly, and serving loses a third of its throughput while a sync runs. On an idle machine it changes
 * nothing. Where the platform refuses (no permission), the import runs as it was started.
 */
export function yieldToServing(): void {
  try {
    setPriority(IMPORT_NICENESS)
  } catch {
    // Not allowed here: the import runs at the priority it was given.
  }
}
