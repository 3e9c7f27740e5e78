import { close, existsSync, openSync, statSync, unlinkSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { Db } from '../../db/open.js'
import { inflated, type Precompressed } from '../../http/gzipSplice.js'
import type { Criterion } from './declaration.js'
import { type ActiveRelease, activeRelease, releasePath } from './releases.js'
import { type StoreLayout, TALLIES_FROM, textTableKey } from './schema.js'
import { StoredJson } from './stored.js'

/**
 * Page cache of a served release file, at most (pages are held only as they are read). What searches use again
 * and again, a national release's b-tree interior pages (12.5 MiB at 7,000,000 resources, 16 KiB pages) and the
 * full-text lists of common names, was pushed out of SQLite's default 16 MB by the leaves random reads pass
 * through once: a `family` search with its practitioners' roles 586 → 535 µs on one connection alone.
 */
const RELEASE_CACHE_KIB = 64 * 1024

/** Which criterion drives the scan: the most selective kind first. */
const RANK: Record<Criterion['kind'], number> = { id: 0, token: 1, ref: 2, text: 3, type: 4 }

interface Sql {
  text: string
  args: unknown[]
}

const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ')

/** Text criteria on one full-text table are one MATCH: their fragments joined with AND. */
function mergeTexts(criteria: readonly Criterion[]): Criterion[] {
  const merged: Criterion[] = []
  for (const criterion of criteria) {
    if (criterion.kind !== 'text') {
      merged.push(criterion)
      continue
    }
    const same = merged.findIndex(
      (known) =>
        known.kind === 'text' &&
        known.type === criterion.type &&
        (known.tokenizer ?? 'words') === (criterion.tokenizer ?? 'words'),
    )
    const known = merged[same]
    if (known?.kind === 'text') merged[same] = { ...known, match: `${known.match} AND ${criterion.match}` }
    else merged.push(criterion)
  }
  return merged
}

function textTable(layout: StoreLayout, criterion: Criterion & { kind: 'text' }): string {
  const text = layout.textTables.get(textTableKey(criterion.type, criterion.tokenizer))
  if (!text) throw new Error(`${criterion.type} has no ${criterion.tokenizer ?? 'words'} full-text table`)
  return text.table
}

/** The scan for the driving criterion in schema `s`: a `rid` column in ascending order, ready for `rid > ?`. */
function driver(
  layout: StoreLayout,
  s: string,
  criterion: Criterion,
): { from: string; rid: string; args: unknown[]; distinct: boolean } {
  switch (criterion.kind) {
    case 'type':
      return {
        from: `${s}.${layout.resource} d WHERE d.type = ?`,
        rid: 'd.rid',
        args: [criterion.type],
        distinct: false,
      }
    case 'id':
      return {
        from: `${s}.${layout.resource} d WHERE d.type = ? AND d.id = ?`,
        rid: 'd.rid',
        args: [criterion.type, criterion.id],
        distinct: false,
      }
    case 'token':
      return {
        from: `${s}.${layout.token} d WHERE d.param = ? AND d.code = ?${criterion.systems ? ` AND d.system IN (${marks(criterion.systems.length)})` : ''}`,
        rid: 'd.rid',
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
        distinct: true,
      }
    case 'ref':
      return {
        from: `${s}.${layout.ref} d WHERE d.param = ? AND d.target = ?`,
        rid: 'd.rid',
        args: [criterion.param, criterion.target],
        distinct: true,
      }
    case 'text': {
      const table = textTable(layout, criterion)
      return {
        from: `${s}.${table} WHERE ${table} MATCH ?`,
        rid: `${table}.rowid`,
        args: [criterion.match],
        distinct: false,
      }
    }
  }
}

function filter(layout: StoreLayout, s: string, criterion: Criterion, rid: string): Sql {
  switch (criterion.kind) {
    case 'type':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.${layout.resource} x WHERE x.rid = ${rid} AND x.type = ?)`,
        args: [criterion.type],
      }
    case 'id':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.${layout.resource} x WHERE x.rid = ${rid} AND x.type = ? AND x.id = ?)`,
        args: [criterion.type, criterion.id],
      }
    case 'token':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.${layout.token} x WHERE x.param = ? AND x.code = ? AND x.rid = ${rid}${criterion.systems ? ` AND x.system IN (${marks(criterion.systems.length)})` : ''})`,
        args: [criterion.param, criterion.code, ...(criterion.systems ?? [])],
      }
    case 'ref':
      return {
        text: `EXISTS (SELECT 1 FROM ${s}.${layout.ref} x WHERE x.param = ? AND x.target = ? AND x.rid = ${rid})`,
        args: [criterion.param, criterion.target],
      }
    case 'text': {
      const table = textTable(layout, criterion)
      return {
        text: `${rid} IN (SELECT rowid FROM ${s}.${table} WHERE ${table} MATCH ?)`,
        args: [criterion.match],
      }
    }
  }
}

/**
 * Matching rids in ascending order: `SELECT rid … WHERE <driver> AND <filters> [AND rid > ?]`, and how many
 * there are. The count is `count(DISTINCT rid)` over the same rows, not a count of that select: as a
 * subquery it is run as a co-routine, which took 2.5-3.0 ms where this takes 1.75 for a network's 24,479
 * affiliations of the national bench release.
 */
function matchSql(
  layout: StoreLayout,
  s: string,
  criteria: readonly Criterion[],
): { select: string; count: string; rid: string; args: unknown[] } {
  const [first, ...rest] = mergeTexts(criteria).sort((a, b) => RANK[a.kind] - RANK[b.kind])
  if (!first) throw new Error('a search needs at least one criterion')
  const scan = driver(layout, s, first)
  const filters = rest.map((criterion) => filter(layout, s, criterion, scan.rid))
  const rows = `FROM ${scan.from}${filters.map((f) => ` AND ${f.text}`).join('')}`
  return {
    select: `SELECT ${scan.distinct ? 'DISTINCT ' : ''}${scan.rid} AS rid ${rows}`,
    count: `SELECT ${scan.distinct ? `count(DISTINCT ${scan.rid})` : 'count(*)'} ${rows}`,
    rid: scan.rid,
    args: [...scan.args, ...filters.flatMap((f) => f.args)],
  }
}

export interface StoredResource {
  rid: number
  stored: StoredJson
}

/**
 * What a resource row is read as (see schema.ts): its text alone; its text and what its release keeps
 * compressed of it; or, for a resource kept compressed, that alone and the text's length, the text read
 * only if it is wanted after all.
 */
const READ_AS = {
  text: 'CAST(json AS BLOB) AS bytes',
  textAndKept: 'CAST(json AS BLOB) AS bytes, gz, gz_crc',
  keptAlone:
    'CASE WHEN gz IS NULL THEN CAST(json AS BLOB) END AS bytes, gz, gz_crc, octet_length(json) AS length',
}

/**
 * What a reading needs of a large resource kept compressed by its release (READ_AS). For an answer that goes
 * out gzipped (`gzip`): what is kept, and the text only if something reads it too (`text`: a mark). For any
 * other: the text alone. The main file's tables (which can change between two statements) and files made
 * before `gz_crc` give the text alone in any case.
 */
export interface ReadOptions {
  gzip?: boolean
  text?: boolean
}

/** A resource row as read (READ_AS): what is kept, and the text's length, only where they are selected. */
interface StoredRow {
  type: string
  id: string
  bytes: Buffer | null
  gz?: Buffer | null
  gz_crc?: number | null
  length?: number
}

/**
 * Read-side queries on a store's live release. Each release is a file of its own (see importer.ts), attached
 * to the main connection; a release imported before that lives in the main file's tables, read instead.
 */
export class ReleaseReader {
  #generation = -1
  /** The release served, the file attached for it (null: the main file's tables) and the schema to read. */
  #release = 0
  #attached: string | null = null
  #schema = 'main'
  /** No release was ever imported and the main file has no tables of this store: every read finds nothing. */
  #empty = false
  /** Whether the served release file keeps large resources compressed (`gz_crc`). */
  #keeps = false
  /** The served file's RELEASE_FORMAT (0: the main file's tables, or a file made before formats). */
  #format = 0

  /** The schema a release file is attached as, on this connection. */
  readonly #attachAs: string
  /**
   * A descriptor of our own on the attached file. An import removes a replaced release's file as it goes
   * live, while servers still have it attached: the last close of an unlinked file frees its blocks, about
   * 150 ms for 500 MB, and DETACH would do that on the event loop. With this one still open, DETACH is cheap
   * and the last close runs on libuv's thread pool.
   */
  #held: number | undefined

  /**
   * Runs reads in one transaction. Made once: better-sqlite3 builds a transaction function with its five
   * variants on every `db.transaction()` call, which cost more than the BEGIN and COMMIT it runs.
   */
  readonly #consistently: (read: () => unknown) => unknown

  constructor(
    private readonly db: Db,
    private readonly layout: StoreLayout,
  ) {
    this.#consistently = db.transaction((read: () => unknown) => read())
    this.#attachAs = `${layout.declaration.prefix}_release`
    db.onClose(() => this.#letGo())
  }

  /** Closes our descriptor of the file no longer attached, on libuv's thread pool. */
  #letGo(): void {
    if (this.#held !== undefined) close(this.#held, () => undefined)
    this.#held = undefined
  }

  /**
   * Runs several reads on one release. Whenever the main file may have changed (changeGeneration), the
   * release named active there is looked up first, and attached in place of the previous one if it is new:
   * a running server serves a release from the request after it goes live, with no restart.
   */
  snapshot<T>(read: () => T): T {
    this.#follow()
    // A release file never changes once live (a new release is a new file, attached only here, outside
    // the reads): its reads agree without a transaction, whose BEGIN and COMMIT cost about what a small read
    // does. The main file's tables (an old release, Questionnaires) can change between two statements.
    return this.#attached !== null ? read() : (this.#consistently(read) as T)
  }

  /** One statement reads one state of the file already: no transaction around it, main file or release. */
  readOne(type: string, id: string, options: ReadOptions = {}): StoredJson | undefined {
    this.#follow()
    return this.read(type, id, options)
  }

  /** The release served (0 before any import); cursors name it so a reload is noticed. */
  release(): number {
    return this.#release
  }

  #follow(): void {
    const generation = this.db.changeGeneration()
    // ATTACH cannot run inside a transaction: the release in place serves until the next call outside one.
    if (generation === this.#generation || this.db.inTransaction) return
    const active = activeRelease(this.db, this.layout.declaration.name)
    if (active?.id !== this.#release || (active?.file ?? null) !== this.#attached) this.#serve(active)
    this.#generation = generation
  }

  #serve(active: ActiveRelease | undefined): void {
    if (this.#attached !== null) this.db.exec(`DETACH DATABASE ${this.#attachAs}`)
    this.#letGo()
    this.#attached = null
    this.#schema = 'main'
    this.#keeps = false
    this.#format = 0
    this.#release = active?.id ?? 0
    this.#empty = false
    if (!active?.file) {
      this.#empty =
        this.db
          .prepare(`SELECT count(*) FROM main.sqlite_schema WHERE name = ?`)
          .pluck()
          .get(this.layout.resource) === 0
      return
    }
    const path = releasePath(this.db.name, active.file)
    // ATTACH makes an empty database where there is no file: a missing release must not become one.
    const missing = () =>
      new Database.SqliteError(
        `The ${this.layout.declaration.name} release file ${path} is missing`,
        'SQLITE_CANTOPEN',
      )
    if (!existsSync(path)) throw missing()
    this.db.prepare(`ATTACH DATABASE ? AS ${this.#attachAs}`).run(path)
    // A live release file is never written again (a new release is a new file), so its shared lock is taken
    // once and kept while it is served. Otherwise every statement on it took and dropped its locks, looked for
    // a hot journal and a WAL file and read the header again to know whether its cached pages still held:
    // eight system calls a statement, two or three statements a search. Shared locks do not hinder the
    // other servers reading it, nor an import writing the next release (another file) or removing this one.
    this.db.pragma(`${this.#attachAs}.locking_mode = EXCLUSIVE`)
    this.db.pragma(`${this.#attachAs}.cache_size = -${RELEASE_CACHE_KIB}`)
    const holds = this.db
      .prepare(`SELECT count(*) FROM ${this.#attachAs}.sqlite_schema WHERE name = ?`)
      .pluck()
      .get(this.layout.resource)
    if (holds !== 1) {
      // It went between the check and the ATTACH (a newer import removed it): undo, and look again next time.
      this.db.exec(`DETACH DATABASE ${this.#attachAs}`)
      if (statSync(path, { throwIfNoEntry: false })?.size === 0) unlinkSync(path)
      throw missing()
    }
    this.#attached = active.file
    this.#schema = this.#attachAs
    this.#keeps = this.#keepsDeflated()
    this.#format = this.db.pragma(`${this.#attachAs}.user_version`, { simple: true }) as number
    try {
      this.#held = openSync(path, 'r')
    } catch {
      // Removed already (a newer release went live meanwhile): the next read looks again.
    }
  }

  read(type: string, id: string, options: ReadOptions = {}): StoredJson | undefined {
    if (this.#empty) return undefined
    const row = this.db
      .statement(
        `SELECT rid, type, id, ${this.#rowAs(options)} FROM ${this.#schema}.${this.layout.resource} WHERE type = ? AND id = ?`,
      )
      .get(type, id) as (StoredRow & { rid: number }) | undefined
    return row === undefined ? undefined : this.#stored(row.rid, row)
  }

  /**
   * Up to `limit` matches after rid `after`, in rid order (stable for keyset paging), and whether more match
   * past them (one rid more is looked up; no resource is read for it). With `countUpTo`, up to that many
   * rids are looked up, and when they are all there are past `after`, `counted` says how many: a count
   * without running the search again (a name and a state: most of its time goes into the text match).
   */
  page(
    criteria: readonly Criterion[],
    after: number,
    limit: number,
    options: ReadOptions & { countUpTo?: number } = {},
  ): { rows: StoredResource[]; more: boolean; counted: number | undefined } {
    if (this.#empty) return { rows: [], more: false, counted: 0 }
    const sql = matchSql(this.layout, this.#schema, criteria)
    const lookedUp = Math.max(limit, options.countUpTo ?? 0) + 1
    // `? + 0`: a bare LIMIT parameter is planned as a constant, so each run would plan the statement again.
    const rids = this.db
      .statement(`${sql.select} AND ${sql.rid} > ? ORDER BY ${sql.rid} LIMIT ? + 0`)
      .pluck()
      .all(...sql.args, after, lookedUp) as number[]
    const more = rids.length > limit
    const readAs = this.#rowAs(options)
    return {
      rows: rids.slice(0, limit).map((rid) => ({ rid, stored: this.#byRid(rid, readAs) })),
      more,
      counted: rids.length < lookedUp ? rids.length : undefined,
    }
  }

  /**
   * How many match, where the release counted it as it was built: one reference or token value (a token
   * under any system) held by more than TALLIED_ABOVE resources. Undefined for fewer, another search, or a
   * file made before TALLIES_FROM.
   */
  tallied(criteria: readonly Criterion[]): number | undefined {
    const [only] = criteria
    if (this.#empty || this.#format < TALLIES_FROM || criteria.length !== 1 || !only) return undefined
    const [table, column, param, value] =
      only.kind === 'ref'
        ? [this.layout.ref, 'target', only.param, only.target]
        : only.kind === 'token' && only.systems === undefined
          ? [this.layout.token, 'code', only.param, only.code]
          : []
    if (table === undefined) return undefined
    return this.db
      .statement(`SELECT n FROM ${this.#schema}.${table}_tally WHERE param = ? AND ${column} = ?`)
      .pluck()
      .get(param, value) as number | undefined
  }

  count(criteria: readonly Criterion[]): number {
    if (this.#empty) return 0
    const tallied = this.tallied(criteria)
    if (tallied !== undefined) return tallied
    const sql = matchSql(this.layout, this.#schema, criteria)
    return this.db
      .statement(sql.count)
      .pluck()
      .get(...sql.args) as number
  }

  /** The served release's file format (RELEASE_FORMAT), 0 for the main file's tables. */
  format(): number {
    return this.#format
  }

  /** Those of `rids` that token parameter `param` indexes under `system` and `code`. */
  indexedUnder(param: number, system: string, code: string, rids: readonly number[]): Set<number> {
    if (this.#empty || rids.length === 0) return new Set()
    return new Set(
      this.db
        .statement(
          `SELECT rid FROM ${this.#schema}.${this.layout.token} WHERE param = ? AND code = ? AND system = ? AND rid IN (SELECT value FROM json_each(?))`,
        )
        .pluck()
        .all(param, code, system, JSON.stringify(rids)) as number[],
    )
  }

  /**
   * Per resource of `rids`, the ids its reference parameters `params` point at, each in the order the
   * resource gives them (rows were written in that order), for a forward `_include`. Files from
   * REFERENCES_BY_RESOURCE_FROM on: the index by resource makes it a lookup per resource.
   */
  referencesOf(rids: readonly number[], params: readonly number[]): Map<number, Map<number, string[]>> {
    const found = new Map<number, Map<number, string[]>>()
    if (this.#empty || rids.length === 0) return found
    const rows = this.db
      .statement(
        `SELECT rid, param, target FROM ${this.#schema}.${this.layout.ref}
         WHERE rid IN (SELECT value FROM json_each(?)) AND param IN (SELECT value FROM json_each(?))
         ORDER BY rid, param, rowid`,
      )
      .raw()
      .all(JSON.stringify(rids), JSON.stringify(params)) as [number, number, string][]
    for (const [rid, param, target] of rows) {
      let byParam = found.get(rid)
      if (!byParam) found.set(rid, (byParam = new Map()))
      const targets = byParam.get(param)
      if (targets) targets.push(target)
      else byParam.set(param, [target])
    }
    return found
  }

  /** The resources whose reference parameter `param` points at `target`, for a reverse `_include`. */
  referencing(param: number, target: string, options: ReadOptions = {}): StoredJson[] {
    if (this.#empty) return []
    const rids = this.db
      .statement(
        `SELECT rid FROM ${this.#schema}.${this.layout.ref} WHERE param = ? AND target = ? ORDER BY rid`,
      )
      .pluck()
      .all(param, target) as number[]
    const readAs = this.#rowAs(options)
    return rids.map((rid) => this.#byRid(rid, readAs))
  }

  #byRid(rid: number, readAs: string): StoredJson {
    const row = this.db
      .statement(`SELECT type, id, ${readAs} FROM ${this.#schema}.${this.layout.resource} WHERE rid = ?`)
      .get(rid) as StoredRow
    return this.#stored(rid, row)
  }

  #rowAs(options: ReadOptions): string {
    if (!this.#keeps || !options.gzip) return READ_AS.text
    return options.text ? READ_AS.textAndKept : READ_AS.keptAlone
  }

  #stored(rid: number, row: StoredRow): StoredJson {
    const kept =
      row.gz == null || row.gz_crc == null
        ? undefined
        : { deflated: row.gz, crc: row.gz_crc, length: row.bytes?.length ?? (row.length as number) }
    if (row.bytes !== null || kept === undefined)
      return new StoredJson(row.type, row.id, row.bytes as Buffer, kept)
    const release = this.#release
    return new StoredJson(row.type, row.id, () => this.#text(rid, release, kept), kept)
  }

  /**
   * The text of resource `rid` of `release`, read when first wanted (a caller that does not take gzip). If
   * another release is served by then (an answer finished after an await), its file is gone: the text is
   * inflated from what was read of it.
   */
  #text(rid: number, release: number, kept: Precompressed): Buffer {
    if (release !== this.#release) return inflated(kept)
    return this.db
      .statement(`SELECT CAST(json AS BLOB) FROM ${this.#schema}.${this.layout.resource} WHERE rid = ?`)
      .pluck()
      .get(rid) as Buffer
  }

  #keepsDeflated(): boolean {
    return (
      this.db
        .prepare(`SELECT count(*) FROM pragma_table_info(?, ?) WHERE name = 'gz_crc'`)
        .pluck()
        .get(this.layout.resource, this.#schema) === 1
    )
  }
}
