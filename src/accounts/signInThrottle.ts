import type { Db } from '../db/open.js'

/** Five failures within 15 minutes, per account and per client address; the sixth try is refused. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000
export const SIGN_IN_FAILURES_ALLOWED = 5

/** What a sign-in attempt is counted under: the account named and the address it came from. */
export const signInScopes = (email: string, address: string) => [
  `account:${email.trim().toLowerCase()}`,
  `address:${address}`,
]

/**
 * Seconds until one of `scopes` may try again, or 0 when none is throttled: a scope with the allowed number
 * of failures in the window waits until its oldest one leaves the window.
 */
export function signInRetryAfter(live: Db, scopes: readonly string[], now: number): number {
  let waitMs = 0
  for (const scope of scopes) {
    const recent = live
      .statement('SELECT at FROM signin_failures WHERE scope = ? AND at > ? ORDER BY at DESC LIMIT ?')
      .pluck()
      .all(scope, now - SIGN_IN_WINDOW_MS, SIGN_IN_FAILURES_ALLOWED) as number[]
    if (recent.length < SIGN_IN_FAILURES_ALLOWED) continue
    waitMs = Math.max(waitMs, (recent.at(-1) as number) + SIGN_IN_WINDOW_MS - now)
  }
  return Math.ceil(waitMs / 1000)
}

export function recordSignInFailure(live: Db, scopes: readonly string[], now: number): void {
  live.transaction(() => {
    live.statement('DELETE FROM signin_failures WHERE at <= ?').run(now - SIGN_IN_WINDOW_MS)
    for (const scope of scopes)
      live.statement('INSERT INTO signin_failures (scope, at) VALUES (?, ?)').run(scope, now)
  })()
}

/** A successful sign-in forgets the account's failures (the address's stay counted). */
export function clearAccountFailures(live: Db, accountScope: string): void {
  live.statement('DELETE FROM signin_failures WHERE scope = ?').run(accountScope)
}
