import { existsSync, statSync, unlinkSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { Db } from '../db/open.js'
import { type DirectoryType, type NamedType, nameTable, REF_PARAMS } from './model.js'
import { type ActiveRelease, activeRelease, releasePath } from './releases.js'

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

/** The scan for the driving criterion in schema `s`: a `rid` column in ascending order, ready for `rid > ?`. */
function driver(
  s: string,
  criterion: Criterion,
): { from: string; rid: string; args: unknown[]; distinct: boolean } {
  switch (criterion.kind) {
    case 'id':
      return {
        from: `${s}.dir_resource d WHERE d.type = ? AND d.id = ?`,
        rid: 'd.rid',
        args: [criterion.type, criterion.id],
        distinct: false,
      }
    case 'token':
      return {
        from: `${s}.dir_token d WHERE d.param = ? AND d.code = ?${criterion.systems ? ` AND d.system IN (${marks(criterion.systems.length)})` : ''}`,
        rid: 'd.rid',
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
        distinct: true,
      }
    case 'ref':
      return {
        from: `${s}.dir_ref d WHERE d.param = ? AND d.target = ?`,
        rid: 'd.rid',
        args: [criterion.param, criterion.target],
        distinct: true,
      }
    case 'name': {
      const table = nameTable(criterion.type)
      return {
        from: `${s}.${table} WHERE ${table} MATCH ?`,
        rid: `${table}.rowid`,
        args: [criterion.match],
        distinct: false,
      }
    }
  }
}

function filter(s: string, criterion: Criterion, rid: string): Sql {
  switch (criterion.kind) {
    case 'id':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.dir_resource x WHERE x.rid = ${rid} AND x.type = ? AND x.id = ?)`,
        args: [criterion.type, criterion.id],
      }
    case 'token':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.dir_token x WHERE x.param = ? AND x.code = ? AND x.rid = ${rid}${criterion.systems ? ` AND x.system IN (${marks(criterion.systems.length)})` : ''})`,
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
      }
    case 'ref':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.dir_ref x WHERE x.param = ? AND x.target = ? AND x.rid = ${rid})`,
        args: [criterion.param, criterion.target],
      }
    case 'name': {
      const table = nameTable(criterion.type)
      return {
        text: `${rid} IN (SELECT rowid FROM ${s}.${table} WHERE ${table} MATCH ?)`,
        args: [criterion.match],
      }
    }
  }
}

/** Matching rids in ascending order: `SELECT rid … WHERE <driver> AND <filters> [AND rid > ?]`. */
function matchSql(
  s: string,
  criteria: readonly Criterion[],
): { select: string; rid: string; args: unknown[] } {
  const [first, ...rest] = [...criteria].sort((a, b) => RANK[a.kind] - RANK[b.kind])
  if (!first) throw new Error('a directory search needs at least one criterion')
  const scan = driver(s, first)
  const filters = rest.map((criterion) => filter(s, criterion, scan.rid))
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

/** The schema a release file is attached as, on every connection that reads the directory. */
const ATTACHED = 'dir_release'

/**
 * Read-side queries on the live release. Each release is a file of its own (see importer.ts), attached to the
 * main connection; a release imported before that lives in the main file's tables, which are read instead.
 */
export class DirectoryStore {
  #generation = -1
  /** The release served, the file attached for it (null: the main file's tables) and the schema to read. */
  #release = 0
  #attached: string | null = null
  #schema = 'main'

  constructor(private readonly db: Db) {}

  /**
   * Runs several reads on one release. Whenever the main file may have changed (changeGeneration), the
   * release named active there is looked up first, and attached in place of the previous one if it is new:
   * a running server serves a release from the request after it goes live, with no restart.
   */
  snapshot<T>(read: () => T): T {
    this.#follow()
    return this.db.transaction(read)()
  }

  /** The release served (0 before any import); cursors name it so a reload is noticed. */
  release(): number {
    return this.#release
  }

  #follow(): void {
    const generation = this.db.changeGeneration()
    // ATTACH cannot run inside a transaction: the release in place serves until the next call outside one.
    if (generation === this.#generation || this.db.inTransaction) return
    const active = activeRelease(this.db)
    if (active?.id !== this.#release || (active?.file ?? null) !== this.#attached) this.#serve(active)
    this.#generation = generation
  }

  #serve(active: ActiveRelease | undefined): void {
    if (this.#attached !== null) this.db.exec(`DETACH DATABASE ${ATTACHED}`)
    this.#attached = null
    this.#schema = 'main'
    this.#release = active?.id ?? 0
    if (!active?.file) return
    const path = releasePath(this.db.name, active.file)
    // ATTACH makes an empty database where there is no file: a missing release must not become one.
    const missing = () =>
      new Database.SqliteError(`The directory release file ${path} is missing`, 'SQLITE_CANTOPEN')
    if (!existsSync(path)) throw missing()
    this.db.prepare(`ATTACH DATABASE ? AS ${ATTACHED}`).run(path)
    const holds = this.db
      .prepare(`SELECT count(*) FROM ${ATTACHED}.sqlite_schema WHERE name = 'dir_resource'`)
      .pluck()
      .get()
    if (holds !== 1) {
      // It went between the check and the ATTACH (a newer import removed it): undo, and look again next time.
      this.db.exec(`DETACH DATABASE ${ATTACHED}`)
      if (statSync(path, { throwIfNoEntry: false })?.size === 0) unlinkSync(path)
      throw missing()
    }
    this.#attached = active.file
    this.#schema = ATTACHED
  }

  read(type: DirectoryType, id: string): Record<string, unknown> | undefined {
    const json = this.db
      .statement(`SELECT json FROM ${this.#schema}.dir_resource WHERE type = ? AND id = ?`)
      .pluck()
      .get(type, id)
    return typeof json === 'string' ? (JSON.parse(json) as Record<string, unknown>) : undefined
  }

  /** Up to `limit` matches after rid `after`, in rid order (stable for keyset paging). */
  page(criteria: readonly Criterion[], after: number, limit: number): StoredResource[] {
    const sql = matchSql(this.#schema, criteria)
    // `? + 0`: a bare LIMIT parameter is planned as a constant, so each run would plan the statement again.
    const rids = this.db
      .statement(`${sql.select} AND ${sql.rid} > ? ORDER BY ${sql.rid} LIMIT ? + 0`)
      .pluck()
      .all(...sql.args, after, limit) as number[]
    return rids.map((rid) => ({ rid, resource: this.#byRid(rid) }))
  }

  count(criteria: readonly Criterion[]): number {
    const sql = matchSql(this.#schema, criteria)
    return this.db
      .statement(`SELECT count(*) FROM (${sql.select})`)
      .pluck()
      .get(...sql.args) as number
  }

  /** The roles that name one practitioner, for `_include=PractitionerRole:practitioner`. */
  rolesOf(practitionerId: string): Record<string, unknown>[] {
    const rids = this.db
      .statement(`SELECT rid FROM ${this.#schema}.dir_ref WHERE param = ? AND target = ? ORDER BY rid`)
      .pluck()
      .all(REF_PARAMS.rolePractitioner, practitionerId) as number[]
    return rids.map((rid) => this.#byRid(rid))
  }

  #byRid(rid: number): Record<string, unknown> {
    const json = this.db
      .statement(`SELECT json FROM ${this.#schema}.dir_resource WHERE rid = ?`)
      .pluck()
      .get(rid) as string
    return JSON.parse(json) as Record<string, unknown>
  }
}
