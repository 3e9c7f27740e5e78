import type { Clock } from '../clock.js'
import { describeStoreError } from '../db/open.js'

const MINUTE_MS = 60_000

/**
 * Per kind of event, whether to log it now: the first of a kind in a minute is, the others are only counted,
 * and their number is said with the next one logged (the returned suffix; undefined: not now).
 */
function oncePerMinute(clock: Clock): (key: string) => string | undefined {
  const kinds = new Map<string, { loggedAt: number; suppressed: number }>()
  return (key) => {
    const now = clock()
    const kind = kinds.get(key)
    if (kind && now - kind.loggedAt < MINUTE_MS) {
      kind.suppressed++
      return undefined
    }
    kinds.set(key, { loggedAt: now, suppressed: 0 })
    if (kinds.size > 1000) kinds.delete(kinds.keys().next().value as string)
    return kind?.suppressed ? ` (also ${kind.suppressed} more times in the minute before)` : ''
  }
}

/**
 * The operator's log of internal faults, so that one fault repeated by a flood of requests costs a line a
 * minute, not a stack trace per request: the first of a kind (its name, message and first stack frame) is
 * logged with its stack, the others of the next minute only counted, and said on the next one logged.
 */
export function throttledErrorLog(log: (line: string, error?: unknown) => void, clock: Clock) {
  const due = oncePerMinute(clock)
  return (error: unknown): void => {
    const fault = error as { name?: string; message?: string; stack?: string }
    const again = due(`${fault?.name}: ${fault?.message}\n${fault?.stack?.split('\n')[1] ?? ''}`)
    if (again !== undefined) log(`internal error${again}:`, error)
  }
}

/**
 * The operator's log of the store failing requests (a full disk, a damaged file, a lock held past the wait):
 * callers get a 503 that says nothing of why, so the server's log must, a line a minute per SQLite code.
 */
export function throttledStoreLog(log: (line: string) => void, clock: Clock) {
  const due = oncePerMinute(clock)
  return (error: unknown): void => {
    const { message, code } = error as { message?: string; code?: string }
    const again = due(code ?? String(message))
    if (again !== undefined) log(`store unavailable, answering 503${again}: ${describeStoreError(error)}`)
  }
}
