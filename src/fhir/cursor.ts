import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Db } from '../db/open.js'
import { ApiError } from '../http/errors.js'

/** How long a `page` cursor stays valid after the page that issued it. */
export const CURSOR_TTL_MS = 30 * 60 * 1000

const SECRET_SETTING = 'fhir.cursor_secret'

/**
 * The per-database cursor key (32 bytes: an AES-256 key). Created once by whichever process asks first (INSERT OR IGNORE), so every
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

const refused = (message: string) => ApiError.invalid([{ path: ['page'], message }])

const IV_BYTES = 12
const TAG_BYTES = 16
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** Where the search a cursor continues answers from: a cursor of one kind is refused by the other. */
export type CursorSource = 'local' | 'remote'

/**
 * Opaque continuation cursors for FHIR searches: the search state, its kind and source and an expiry,
 * encrypted and authenticated with AES-256-GCM under the database's secret. Clients can neither read them (a
 * remote search's state holds the upstream's paths) nor alter or keep them, and each has one spelling only.
 */
export class CursorCodec {
  #secret: Buffer | undefined

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly source: CursorSource,
  ) {}

  /** `kind` binds the cursor to one search endpoint, so a Practitioner cursor cannot page Endpoints. */
  seal(kind: string, state: unknown): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key(), iv)
    const payload = JSON.stringify({ k: kind, o: this.source, e: this.clock() + CURSOR_TTL_MS, s: state })
    const sealed = Buffer.concat([iv, cipher.update(payload, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return sealed.toString('base64url')
  }

  /** The state sealed for `kind`; a 400 naming `page` when the cursor is altered, foreign or expired. */
  open<T>(kind: string, cursor: string): T {
    const sealed = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0)
    // Base64url decoding is lenient: only the one spelling this service wrote is taken.
    if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.toString('base64url') !== cursor)
      throw refused('"page" is not a cursor issued by this service')
    let text: string
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key(), sealed.subarray(0, IV_BYTES))
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
      text = decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES), undefined, 'utf8')
      text += decipher.final('utf8')
    } catch {
      throw refused('"page" is not a cursor issued by this service (altered or from another database)')
    }
    const payload = JSON.parse(text) as { k: string; o: CursorSource; e: number; s: T }
    if (payload.k !== kind) throw refused(`"page" continues a ${payload.k} search, not a ${kind} search`)
    if (payload.o !== this.source)
      throw refused(
        '"page" continues a search of another source than this server answers from; start it again',
      )
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
