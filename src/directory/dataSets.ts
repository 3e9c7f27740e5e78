import type { DataSet } from '../api/domain.js'
import type { Db } from '../db/open.js'

const count = (n: number) => n.toLocaleString('en-US')

/** The directory release served, with its resources by type. */
export function directoryDataSets(db: Db): DataSet[] {
  const row = db
    .prepare(
      `SELECT id, finished_at AS finishedAt, sources, summary FROM directory_releases
        WHERE state = 'active' ORDER BY id DESC LIMIT 1`,
    )
    .get() as { id: number; finishedAt: string | null; sources: string; summary: string | null } | undefined
  if (!row) return []
  const types =
    (JSON.parse(row.summary ?? '{}') as { types?: Record<string, { imported: number }> }).types ?? {}
  const byType = Object.entries(types).filter(([, type]) => type.imported > 0)
  const total = byType.reduce((sum, [, type]) => sum + type.imported, 0)
  return [
    {
      kind: 'directory',
      name: `release ${row.id}`,
      source: (JSON.parse(row.sources) as string[]).join(', '),
      importedAt: row.finishedAt,
      holds: `${count(total)} resources: ${byType.map(([type, { imported }]) => `${count(imported)} ${type}`).join(', ')}`,
    },
  ]
}
