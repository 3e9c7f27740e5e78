import { cachedStatement, type Db } from '../db/open.js'
import { type DirectoryType, type NamedType, nameTable, REF_PARAMS } from './model.js'

/** One condition a match must meet; the most selective one drives the scan, the others filter it. */
export type Criterion =
  | { kind: 'id'; type: DirectoryType; id: string }
  | { kind: 'token'; param: number; code: string; systems?: readonly string[] }
  | { kind: 'ref'; param: number; target: string }
  | { kind: 'name'; type: NamedType; match: string }

const RANK: Record<Criterion['kind'], number> = { id: 0, token: 1, ref: 2, name: 3 }

interface Sql {
  text: string
  args: unknown[]
}

const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ')

/** The scan for the driving criterion: a `rid` column in ascending order, ready for `rid > ?`. */
function driver(criterion: Criterion): { from: string; rid: string; args: unknown[]; distinct: boolean } {
  switch (criterion.kind) {
    case 'id':
      return {
        from: 'dir_resource d WHERE d.type = ? AND d.id = ?',
        rid: 'd.rid',
        args: [criterion.type, criterion.id],
        distinct: false,
      }
    case 'token':
      return {
        from: `dir_token d WHERE d.param = ? AND d.code = ?${criterion.systems ? ` AND d.system IN (${marks(criterion.systems.length)})` : ''}`,
        rid: 'd.rid',
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
        distinct: true,
      }
    case 'ref':
      return {
        from: 'dir_ref d WHERE d.param = ? AND d.target = ?',
        rid: 'd.rid',
        args: [criterion.param, criterion.target],
        distinct: true,
      }
    case 'name': {
      const table = nameTable(criterion.type)
      return {
        from: `${table} WHERE ${table} MATCH ?`,
        rid: `${table}.rowid`,
        args: [criterion.match],
        distinct: false,
      }
    }
  }
}

function filter(criterion: Criterion, rid: string): Sql {
  switch (criterion.kind) {
    case 'id':
      return {
        text: `EXISTS (SELECT 1 FROM dir_resource x WHERE x.rid = ${rid} AND x.type = ? AND x.id = ?)`,
        args: [criterion.type, criterion.id],
      }
    case 'token':
      return {
        text: `EXISTS (SELECT 1 FROM dir_token x WHERE x.param = ? AND x.code = ? AND x.rid = ${rid}${criterion.systems ? ` AND x.system IN (${marks(criterion.systems.length)})` : ''})`,
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
      }
    case 'ref':
      return {
        text: `EXISTS (SELECT 1 FROM dir_ref x WHERE x.param = ? AND x.target = ? AND x.rid = ${rid})`,
        args: [criterion.param, criterion.target],
      }
    case 'name': {
      const table = nameTable(criterion.type)
      return {
        text: `${rid} IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?)`,
        args: [criterion.match],
      }
    }
  }
}

/** Matching rids in ascending order: `SELECT rid … WHERE <driver> AND <filters> [AND rid > ?]`. */
function matchSql(criteria: readonly Criterion[]): { select: string; rid: string; args: unknown[] } {
  const [first, ...rest] = [...criteria].sort((a, b) => RANK[a.kind] - RANK[b.kind])
  if (!first) throw new Error('a directory search needs at least one criterion')
  const scan = driver(first)
  const filters = rest.map((criterion) => filter(criterion, scan.rid))
  return {
    select: `SELECT ${scan.distinct ? 'DISTINCT ' : ''}${scan.rid} AS rid FROM ${scan.from}${filters.map((f) => ` AND ${f.text}`).join('')}`,
    rid: scan.rid,
    args: [...scan.args, ...filters.flatMap((f) => f.args)],
  }
}

export interface StoredResource {
  rid: number
  resource: Record<string, unknown>
}

/** Read-side queries on the live release. */
export class DirectoryStore {
  constructor(private readonly db: Db) {}

  /** Runs several reads on one snapshot, so an import going live in between cannot mix two releases. */
  snapshot<T>(read: () => T): T {
    return this.db.transaction(read)()
  }

  /** The live release's number (0 before any import); cursors name it so a reload is noticed. */
  release(): number {
    return cachedStatement(
      this.db,
      "SELECT coalesce(max(id), 0) FROM directory_releases WHERE state = 'active'",
    )
      .pluck()
      .get() as number
  }

  read(type: DirectoryType, id: string): Record<string, unknown> | undefined {
    const json = cachedStatement(this.db, 'SELECT json FROM dir_resource WHERE type = ? AND id = ?')
      .pluck()
      .get(type, id)
    return typeof json === 'string' ? (JSON.parse(json) as Record<string, unknown>) : undefined
  }

  /** Up to `limit` matches after rid `after`, in rid order (stable for keyset paging). */
  page(criteria: readonly Criterion[], after: number, limit: number): StoredResource[] {
    const sql = matchSql(criteria)
    const rids = cachedStatement(this.db, `${sql.select} AND ${sql.rid} > ? ORDER BY ${sql.rid} LIMIT ?`)
      .pluck()
      .all(...sql.args, after, limit) as number[]
    return rids.map((rid) => ({ rid, resource: this.#byRid(rid) }))
  }

  count(criteria: readonly Criterion[]): number {
    const sql = matchSql(criteria)
    return cachedStatement(this.db, `SELECT count(*) FROM (${sql.select})`)
      .pluck()
      .get(...sql.args) as number
  }

  /** The roles that name one practitioner, for `_include=PractitionerRole:practitioner`. */
  rolesOf(practitionerId: string): Record<string, unknown>[] {
    const rids = cachedStatement(
      this.db,
      'SELECT rid FROM dir_ref WHERE param = ? AND target = ? ORDER BY rid',
    )
      .pluck()
      .all(REF_PARAMS.rolePractitioner, practitionerId) as number[]
    return rids.map((rid) => this.#byRid(rid))
  }

  #byRid(rid: number): Record<string, unknown> {
    const json = cachedStatement(this.db, 'SELECT json FROM dir_resource WHERE rid = ?')
      .pluck()
      .get(rid) as string
    return JSON.parse(json) as Record<string, unknown>
  }
}
