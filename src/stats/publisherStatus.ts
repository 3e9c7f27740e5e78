import type { Db } from '../db/open.js'

export interface PublisherStatus {
  slug: string
  name: string
  enabled: boolean
  /** ISO instant of the last sync that fetched (skipped runs are not recorded); null when never. */
  lastSyncAt: string | null
  /** `synced`, `unchanged`, or `failed: <why>`; null when never synced. */
  lastSyncResult: string | null
  /** Slots held from this publisher since its last successful sync; null on a store without the column. */
  slotsHeld: number | null
}

interface LastSync {
  at?: string
  outcome?: string
  message?: string
}

/**
 * The sync state of each publisher as scheduling records it on the `publishers` row: `last_sync` (JSON
 * {at, outcome, message, …}) and `slot_count`. Either column may be missing on a store whose scheduling
 * migrations have not run; its figures then read as null rather than failing the whole screen.
 */
export function readPublisherStatus(main: Db): PublisherStatus[] {
  const columns = new Set(
    (main.statement('SELECT name FROM pragma_table_info(?)').all('publishers') as { name: string }[]).map(
      (column) => column.name,
    ),
  )
  if (columns.size === 0) return []
  const optional = (column: string) => (columns.has(column) ? column : 'NULL')
  const rows = main
    .statement(
      `SELECT slug, display_name AS name, enabled, ${optional('last_sync')} AS lastSync,
            ${optional('slot_count')} AS slotsHeld
       FROM publishers ORDER BY slug`,
    )
    .all() as {
    slug: string
    name: string
    enabled: number
    lastSync: string | null
    slotsHeld: number | null
  }[]
  return rows.map(({ lastSync, ...row }) => {
    const sync = parseLastSync(lastSync)
    return {
      ...row,
      enabled: row.enabled === 1,
      lastSyncAt: sync?.at ?? null,
      lastSyncResult: sync?.outcome ? `${sync.outcome}${sync.message ? `: ${sync.message}` : ''}` : null,
    }
  })
}

function parseLastSync(text: string | null): LastSync | undefined {
  if (text === null) return undefined
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null ? (value as LastSync) : undefined
  } catch {
    return undefined
  }
}
