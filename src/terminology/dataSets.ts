import type { DataSet } from '../api/domain.js'
import type { Db } from '../db/open.js'

/** Each code system release held (RxNorm among them once imported). */
export function terminologyDataSets(db: Db): DataSet[] {
  const rows = db
    .prepare(
      `SELECT url, version, coalesce(title, name, url) AS title, origin, concept_count AS concepts, loaded_at AS loadedAt
         FROM term_code_systems ORDER BY title, version`,
    )
    .all() as {
    url: string
    version: string
    title: string
    origin: string
    concepts: number
    loadedAt: number
  }[]
  return rows.map((row) => ({
    kind: 'code system',
    name: `${row.title} ${row.version}`,
    source: row.origin,
    importedAt: new Date(row.loadedAt).toISOString(),
    holds: `${row.concepts.toLocaleString('en-US')} concepts (${row.url})`,
  }))
}
