import type { Clock } from '../clock.js'

const MINUTE_MS = 60_000

/**
 * The operator's log of internal faults, so that one fault repeated by a flood of requests costs a line a
 * minute, not a stack trace per request: the first of a kind (its name, message and first stack frame) is
 * logged with its stack, the others of the next minute only counted, and said on the next one logged.
 */
export function throttledErrorLog(log: (line: string, error?: unknown) => void, clock: Clock) {
  const kinds = new Map<string, { loggedAt: number; suppressed: number }>()
  return (error: unknown): void => {
    const fault = error as { name?: string; message?: string; stack?: string }
    const key = `${fault?.name}: ${fault?.message}\n${fault?.stack?.split('\n')[1] ?? ''}`
    const now = clock()
    const kind = kinds.get(key)
    if (kind && now - kind.loggedAt < MINUTE_MS) {
      kind.suppressed++
      return
    }
    const again = kind?.suppressed ? ` (also ${kind.suppressed} more times in the minute before)` : ''
    kinds.set(key, { loggedAt: now, suppressed: 0 })
    if (kinds.size > 1000) kinds.delete(kinds.keys().next().value as string)
    log(`internal error${again}:`, error)
  }
}
