import type { DataSet } from '../api/domain.js'
import type { Db } from '../db/open.js'

/** Each program and plan year served (a partition of the active release). */
export function plansDataSets(db: Db): DataSet[] {
  const rows = db
    .prepare(
      `SELECT p.program, p.year, p.name, p.files, p.plans, p.imported_at AS importedAt FROM plans_partitions p
        WHERE p.release = (SELECT id FROM plans_releases WHERE state = 'active' ORDER BY id DESC LIMIT 1)
        ORDER BY p.program, p.year`,
    )
    .all() as {
    program: string
    year: number
    name: string
    files: string
    plans: number
    importedAt: string
  }[]
  return rows.map((row) => ({
    kind: 'plans',
    name: `${row.program.toUpperCase()} ${row.year} (${row.name})`,
    source: (JSON.parse(row.files) as string[]).join(', '),
    importedAt: row.importedAt,
    holds: `${row.plans.toLocaleString('en-US')} InsurancePlans`,
  }))
}
