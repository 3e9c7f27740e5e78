import { cachedStatement, type Db } from '../db/open.js'

export interface PublisherStatus {
  slug: string
  name: string
  enabled: boolean
  /** ISO instant of the last sync attempt; null when never synced or not recorded. */
  lastSyncAt: string | null
  /** `ok`, or what went wrong; null when never synced or not recorded. */
  lastSyncResult: string | null
  /** Slots held from this publisher after its last sync; null when not recorded. */
  slotsHeld: number | null
}

/**
 * The sync state of each publisher, as far as the `publishers` table records it. It reads the optional
 * columns `last_sync_at` (ms since epoch, or ISO text), `last_sync_result` (text: `ok` or the error) and
 * `slot_count` (integer) when present, so it works on stores from before publisher sync recorded them.
 */
export function readPublisherStatus(main: Db): PublisherStatus[] {
  const columns = new Set(
    (
      cachedStatement(main, 'SELECT name FROM pragma_table_info(?)').all('publishers') as { name: string }[]
    ).map((column) => column.name),
  )
  if (columns.size === 0) return []
  const optional = (column: string) => (columns.has(column) ? column : 'NULL')
  const rows = cachedStatement(
    main,
    `SELECT slug, display_name AS name, enabled, ${optional('last_sync_at')} AS lastSyncAt,
            ${optional('last_sync_result')} AS lastSyncResult, ${optional('slot_count')} AS slotsHeld
       FROM publishers ORDER BY slug`,
  ).all() as {
    slug: string
    name: string
    enabled: number
    lastSyncAt: number | string | null
    lastSyncResult: string | null
    slotsHeld: number | null
  }[]
  return rows.map((row) => ({
    ...row,
    enabled: row.enabled === 1,
    lastSyncAt: typeof row.lastSyncAt === 'number' ? new Date(row.lastSyncAt).toISOString() : row.lastSyncAt,
  }))
}
