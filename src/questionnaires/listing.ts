import type Database from 'better-sqlite3'
import { QUESTIONNAIRE_LAYOUT } from './layout.js'

/** One held Questionnaire as `svc questionnaires list` shows it. */
export interface HeldListing {
  id: string
  url: string | null
  version: string | null
  status: string
  origin: string
  source: string
  heldAt: string
  checkedAt: string | null
}

const STATUS_NAMES = ['active', 'draft', 'retired', 'unknown']

/** Every held Questionnaire with its origin; `fetched` only: those from configured sources. */
export function heldListing(
  db: Database.Database,
  options: { fetched?: boolean; url?: string } = {},
): HeldListing[] {
  const rows = db
    .prepare(
      `SELECT r.id, h.url, h.version, h.status_rank AS statusRank, h.origin, h.source, h.held_at AS heldAt, h.checked_at AS checkedAt
       FROM questionnaire_held h JOIN ${QUESTIONNAIRE_LAYOUT.resource} r ON r.rid = h.rid
       WHERE (? = 0 OR h.origin = 'fetched') AND (? IS NULL OR h.url = ?)
       ORDER BY h.url IS NULL, h.url, h.version, r.id`,
    )
    .all(options.fetched ? 1 : 0, options.url ?? null, options.url ?? null) as (Omit<
    HeldListing,
    'status'
  > & {
    statusRank: number
  })[]
  return rows.map(({ statusRank, ...row }) => ({ ...row, status: STATUS_NAMES[statusRank] ?? 'unknown' }))
}
