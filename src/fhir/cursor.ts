import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Db } from '../db/open.js'
import { ApiError } from '../http/errors.js'

/** How long a `page` cursor stays valid after the page that issued it. */
export const CURSOR_TTL_MS = 30 * 60 * 1000

const SECRET_SETTING = 'fhir.cursor_secret'

/**
 * The per-database HMAC key. Created once by whichever process asks first (INSERT OR IGNORE), so every
 * `svc serve` on one file accepts the cursors of the others, and a copied database keeps working links.
 */
function readCursorSecret(db: Db): Buffer {
  db.prepare('INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)').run(
    SECRET_SETTING,
    randomBytes(32).toString('base64'),
  )
  const stored = db.prepare('SELECT value FROM settings WHERE name = ?').pluck().get(SECRET_SETTING)
  return Buffer.from(String(stored), 'base64')
}

const mac = (secret: Buffer, body: string) => createHmac('sha256', secret).update(body).digest()

const refused = (message: string) => ApiError.invalid([{ path: ['page'], message }])

/**
 * Opaque continuation cursors for FHIR searches: the search state as JSON, an expiry, and an HMAC over
 * both. Clients cannot read meaning into them, alter them or keep them forever.
 */
export class CursorCodec {
  #secret: Buffer | undefined

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** `kind` binds the cursor to one search endpoint, so a Practitioner cursor cannot page Endpoints. */
  seal(kind: string, state: unknown): string {
    const body = Buffer.from(JSON.stringify({ k: kind, e: this.clock() + CURSOR_TTL_MS, s: state })).toString(
      'base64url',
    )
    return `${body}.${mac(this.#key(), body).toString('base64url')}`
  }

  /** The state sealed for `kind`; a 400 naming `page` when the cursor is altered, foreign or expired. */
  open<T>(kind: string, cursor: string): T {
    const [body, signature, extra] = cursor.split('.')
    if (!body || !signature || extra !== undefined)
      throw refused('"page" is not a cursor issued by this service')
    const expected = mac(this.#key(), body)
    const given = Buffer.from(signature, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw refused('"page" is not a cursor issued by this service (altered or from another database)')
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      k: string
      e: number
      s: T
    }
    if (payload.k !== kind) throw refused(`"page" continues a ${payload.k} search, not a ${kind} search`)
    if (payload.e <= this.clock()) {
      throw refused(
        `"page" expired at ${new Date(payload.e).toISOString()}; cursors last ${CURSOR_TTL_MS / 60_000} minutes. Start the search again`,
      )
    }
    return payload.s
  }

  #key(): Buffer {
    this.#secret ??= readCursorSecret(this.db)
    return this.#secret
  }
}
