import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import type { Db } from '../db/open.js'

/** A session ends after 30 minutes without a request, and 12 hours after sign-in whatever happens. */
export const SESSION_IDLE_MS = 30 * 60_000
export const SESSION_MAX_MS = 12 * 60 * 60_000
/** `seen_at` is written at most this often, so that browsing does not write on every page. */
const TOUCH_EVERY_MS = 60_000

export interface Session {
  operatorId: number
  /** The token forms carry back (`_csrf`), checked beside the Origin header. */
  csrf: string
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Sessions live in the live file (every serving process sees them). The browser holds the token; the row
 * holds its SHA-256, so that a copy of the file signs nobody in.
 */
export function startSession(live: Db, operatorId: number, now: number): { token: string; session: Session } {
  const token = randomBytes(32).toString('base64url')
  const csrf = randomBytes(18).toString('base64url')
  live
    .statement(
      'INSERT INTO operator_sessions (token_sha256, operator_id, csrf, created_at, seen_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(sha256(token), operatorId, csrf, now, now)
  return { token, session: { operatorId, csrf } }
}

/** The session a token opens, or undefined when it is unknown or has expired (an expired row is removed). */
export function readSession(live: Db, token: string, now: number): Session | undefined {
  const hash = sha256(token)
  const row = live
    .statement(
      'SELECT operator_id AS operatorId, csrf, created_at AS createdAt, seen_at AS seenAt FROM operator_sessions WHERE token_sha256 = ?',
    )
    .get(hash) as (Session & { createdAt: number; seenAt: number }) | undefined
  if (!row) return undefined
  if (now - row.seenAt > SESSION_IDLE_MS || now - row.createdAt > SESSION_MAX_MS) {
    live.statement('DELETE FROM operator_sessions WHERE token_sha256 = ?').run(hash)
    return undefined
  }
  if (now - row.seenAt >= TOUCH_EVERY_MS)
    live.statement('UPDATE operator_sessions SET seen_at = ? WHERE token_sha256 = ?').run(now, hash)
  return { operatorId: row.operatorId, csrf: row.csrf }
}

export function endSession(live: Db, token: string): void {
  live.statement('DELETE FROM operator_sessions WHERE token_sha256 = ?').run(sha256(token))
}

/** Ends every session of an operator (a new password, a removed operator); returns how many. */
export function endOperatorSessions(live: Db, operatorId: number): number {
  return live.prepare('DELETE FROM operator_sessions WHERE operator_id = ?').run(operatorId).changes
}

/** Drops sessions past either expiry, so that the table holds only live ones. */
export function pruneSessions(live: Db, now: number): void {
  live
    .statement('DELETE FROM operator_sessions WHERE seen_at < ? OR created_at < ?')
    .run(now - SESSION_IDLE_MS, now - SESSION_MAX_MS)
}

/** The flash's key comes from the browser's token: the file alone cannot open what it holds. */
const flashKey = (token: string) => createHash('sha256').update(`flash\u0000${token}`).digest()

/**
 * A message for the session's next page only (a new key's secret, shown once across a redirect and on
 * whichever serving process answers it): sealed with AES-256-GCM under a key derived from the token.
 */
export function setFlash(live: Db, token: string, text: string): void {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', flashKey(token), iv)
  const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()])
  live.statement('UPDATE operator_sessions SET flash = ? WHERE token_sha256 = ?').run(sealed, sha256(token))
}

/**
 * The flash, removed as it is read: a reload shows nothing. Most pages have none: that is one read, and only
 * a flash held is taken in a write transaction.
 */
export function takeFlash(live: Db, token: string): string | undefined {
  const hash = sha256(token)
  const held = () =>
    live
      .statement('SELECT flash FROM operator_sessions WHERE token_sha256 = ? AND flash IS NOT NULL')
      .pluck()
      .get(hash) as Buffer | undefined
  if (held() === undefined) return undefined
  // RETURNING would give the value after the update (NULL): read and clear in one write transaction instead.
  const sealed = live
    .transaction(() => {
      const flash = held()
      if (flash) live.statement('UPDATE operator_sessions SET flash = NULL WHERE token_sha256 = ?').run(hash)
      return flash
    })
    .immediate()
  if (!sealed) return undefined
  const decipher = createDecipheriv('aes-256-gcm', flashKey(token), sealed.subarray(0, 12))
  decipher.setAuthTag(sealed.subarray(sealed.length - 16))
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString(
    'utf8',
  )
}
