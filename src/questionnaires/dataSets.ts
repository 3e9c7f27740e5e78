import type { DataSet } from '../api/domain.js'
import type { Db } from '../db/open.js'

/** The Questionnaires held, by origin (curated, imported from a file or an address, fetched). */
export function questionnaireDataSets(db: Db): DataSet[] {
  const rows = db
    .prepare(
      `SELECT origin, count(*) AS held, max(held_at) AS latest, group_concat(DISTINCT source) AS sources
         FROM questionnaire_held GROUP BY origin ORDER BY origin`,
    )
    .all() as { origin: string; held: number; latest: string; sources: string }[]
  return rows.map((row) => ({
    kind: 'questionnaires',
    name: row.origin,
    source: row.sources.split(',').slice(0, 5).join(', ') + (row.sources.split(',').length > 5 ? ', …' : ''),
    importedAt: row.latest,
    holds: `${row.held} Questionnaire${row.held === 1 ? '' : 's'}`,
  }))
}
