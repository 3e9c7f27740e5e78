import type Database from 'better-sqlite3'
import { CheckpointThread } from '../db/checkpointer.js'
import type { Db } from '../db/open.js'
import { deriveSearchRows } from './derive.js'
import {
  DIRECTORY_TYPES,
  type DirectoryType,
  ID_PATTERN,
  isDirectoryType,
  NAME_COLUMNS,
  type NamedType,
  nameTable,
} from './model.js'
import { RELEASE_TABLES, releaseIndexesSql, releaseTablesSql } from './schema.js'
import { decoded, type ImportSource, linesOf, SourceError } from './sources.js'

export interface ImportProblem {
  source: string
  /** 1-based line of an NDJSON file, or entry of a Bundle. */
  line: number
  message: string
}

export interface ImportProgress {
  source: string
  records: number
  imported: number
  skipped: number
}

export interface ImportSummary {
  release: number
  /** Per directory type: records stored and records skipped as bad. */
  types: Record<DirectoryType, { imported: number; skipped: number }>
  /** Resources of other types (InsurancePlan…), counted and left out. */
  ignored: Record<string, number>
  imported: number
  skipped: number
  /** The first MAX_KEPT_PROBLEMS problems; `skipped` counts them all. */
  problems: ImportProblem[]
  durationMs: number
}

export interface ImportOptions {
  onProblem?: (problem: ImportProblem) => void
  onProgress?: (progress: ImportProgress) => void
  /** Records between commits of the staging tables (the live release is untouched until the end). */
  batchSize?: number
  now?: () => number
}

export class ImportError extends Error {
  override name = 'ImportError'
}

const MAX_KEPT_PROBLEMS = 1000
const IMPORT_CACHE_KIB = 64 * 1024
const PROGRESS_EVERY = 20_000
/** Commits between waits for a whole checkpoint, after which the WAL restarts: it holds at most this many. */
const COMMITS_PER_WAL = 5

/** Whose process is alive: a loading release of a dead process is debris to clear, not an import to wait for. */
function alive(pid: number | null): boolean {
  if (pid === null) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function dropStaging(db: Db, release: number): void {
  const suffix = `__r${release}`
  for (const table of RELEASE_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}${suffix}`)
}

function clearDebris(db: Db): void {
  const loading = db.prepare("SELECT id, pid FROM directory_releases WHERE state = 'loading'").all() as {
    id: number
    pid: number | null
  }[]
  for (const release of loading) {
    if (release.pid !== process.pid && alive(release.pid)) continue
    dropStaging(db, release.id)
    db.prepare("UPDATE directory_releases SET state = 'failed' WHERE id = ?").run(release.id)
  }
}

/** Prepared inserts into one release's staging tables. */
function stagingWriter(db: Db, suffix: string) {
  const resource = db.prepare(`INSERT OR IGNORE INTO dir_resource${suffix} (type, id, json) VALUES (?, ?, ?)`)
  const token = db.prepare(`INSERT INTO dir_token${suffix} (param, system, code, rid) VALUES (?, ?, ?, ?)`)
  const ref = db.prepare(`INSERT INTO dir_ref${suffix} (param, target, rid) VALUES (?, ?, ?)`)
  const names = new Map<string, Database.Statement>()
  for (const [type, columns] of Object.entries(NAME_COLUMNS) as [NamedType, readonly string[]][]) {
    names.set(
      type,
      db.prepare(
        `INSERT INTO ${nameTable(type)}${suffix} (rowid, ${columns.join(', ')}) VALUES (?, ${columns.map(() => '?').join(', ')})`,
      ),
    )
  }
  /** Stores one resource and its search rows; false when the release already holds that type and id. */
  return (type: DirectoryType, id: string, json: string, parsed: Record<string, unknown>): boolean => {
    const inserted = resource.run(type, id, json)
    if (inserted.changes === 0) return false
    const rid = inserted.lastInsertRowid
    const rows = deriveSearchRows(type, parsed)
    for (const [param, system, code] of rows.tokens) token.run(param, system, code, rid)
    for (const [param, target] of rows.refs) ref.run(param, target, rid)
    if (rows.names) names.get(type)?.run(rid, ...rows.names)
    return true
  }
}

/** A record as the source gives it: validated, typed, or the reason it is skipped. */
type Checked =
  | { kind: 'resource'; type: DirectoryType; id: string; parsed: Record<string, unknown> }
  | { kind: 'ignored'; type: string }
  | { kind: 'bad'; message: string }

function check(parsed: unknown): Checked {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'bad', message: 'not a JSON object' }
  }
  const resource = parsed as Record<string, unknown>
  const type = resource.resourceType
  if (typeof type !== 'string' || type === '') return { kind: 'bad', message: 'no resourceType' }
  if (!isDirectoryType(type)) return { kind: 'ignored', type }
  const id = resource.id
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    return { kind: 'bad', message: `${type}.id ${JSON.stringify(id)} does not match ${ID_PATTERN.source}` }
  }
  return { kind: 'resource', type, id, parsed: resource }
}

/**
 * Imports one directory release from its sources. Records stream into staging tables (committed in
 * batches, so memory stays flat and the server keeps its write lock turns); the release replaces the live
 * one in a single transaction at the end. Any failure of a source leaves the previous release serving.
 */
export async function importDirectory(
  db: Db,
  sources: readonly ImportSource[],
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const now = options.now ?? Date.now
  const started = now()
  const batchSize = options.batchSize ?? 10_000
  clearDebris(db)
  // A larger page cache keeps the (type, id) index and FTS segments in memory between commits; bounded,
  // so memory stays flat whatever the release size.
  const cacheSize = db.pragma('cache_size', { simple: true })
  db.pragma(`cache_size = -${IMPORT_CACHE_KIB}`)
  const release = Number(
    db
      .prepare("INSERT INTO directory_releases (state, pid, started_at, sources) VALUES ('loading', ?, ?, ?)")
      .run(process.pid, new Date(started).toISOString(), JSON.stringify(sources.map((source) => source.name)))
      .lastInsertRowid,
  )
  const suffix = `__r${release}`
  const types = Object.fromEntries(
    DIRECTORY_TYPES.map((type) => [type, { imported: 0, skipped: 0 }]),
  ) as ImportSummary['types']
  const ignored: Record<string, number> = {}
  const problems: ImportProblem[] = []
  let skipped = 0
  let imported = 0
  let records = 0
  let pending = 0
  let commits = 0

  const problem = (source: string, line: number, message: string, type?: DirectoryType) => {
    skipped++
    if (type) types[type].skipped++
    const found = { source, line, message }
    if (problems.length < MAX_KEPT_PROBLEMS) problems.push(found)
    options.onProblem?.(found)
  }

  // Copying the staging pages from the WAL into the file costs about as much as writing them: a thread of its
  // own does it while this one writes the next batch, instead of this connection stopping at each commit.
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true })
  const checkpoints =
    db.pragma('journal_mode', { simple: true }) === 'wal' ? new CheckpointThread(db.name) : undefined
  if (checkpoints) db.pragma('wal_autocheckpoint = 0')
  try {
    db.exec(releaseTablesSql(suffix, release))
    const write = stagingWriter(db, suffix)
    const take = (source: string, line: number, json: string, parsed: unknown) => {
      records++
      const checked = check(parsed)
      if (checked.kind === 'bad') return problem(source, line, checked.message)
      if (checked.kind === 'ignored') {
        ignored[checked.type] = (ignored[checked.type] ?? 0) + 1
        return
      }
      if (!write(checked.type, checked.id, json, checked.parsed)) {
        return problem(
          source,
          line,
          `duplicate ${checked.type}/${checked.id}: the release already holds it`,
          checked.type,
        )
      }
      imported++
      types[checked.type].imported++
      pending++
    }
    /** Commits the batch once full; every few commits waits for the checkpoint, so the WAL stays small. */
    const commitFull = async () => {
      if (pending < batchSize) return
      db.exec('COMMIT')
      pending = 0
      if (++commits % COMMITS_PER_WAL === 0) await checkpoints?.complete()
      else checkpoints?.start()
      db.exec('BEGIN')
    }

    db.exec('BEGIN')
    for (const source of sources) {
      const stream = await decoded(await source.open())
      const report = () => options.onProgress?.({ source: source.name, records, imported, skipped })
      if (source.format === 'json') {
        await readDocument(stream, source.name, take, problem, commitFull)
      } else {
        for await (const batch of linesOf(stream)) {
          for (const [index, line] of batch.lines.entries()) {
            if (line.trim() === '') continue
            let parsed: unknown
            try {
              parsed = JSON.parse(line)
            } catch (error) {
              problem(source.name, batch.first + index, `not valid JSON (${(error as Error).message})`)
              continue
            }
            take(source.name, batch.first + index, line, parsed)
            if (records % PROGRESS_EVERY === 0) report()
          }
          await commitFull()
        }
      }
      report()
    }
    db.exec('COMMIT')
    await checkpoints?.complete()
    if (imported === 0) throw new ImportError('The sources hold no directory resources; nothing changed')
    db.exec(releaseIndexesSql(suffix, release))

    const summary: ImportSummary = {
      release,
      types,
      ignored,
      imported,
      skipped,
      problems,
      durationMs: now() - started,
    }
    goLive(db, release, summary, now)
    return summary
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    dropStaging(db, release)
    db.prepare("UPDATE directory_releases SET state = 'failed', finished_at = ? WHERE id = ?").run(
      new Date(now()).toISOString(),
      release,
    )
    if (error instanceof ImportError || error instanceof SourceError) throw error
    throw new ImportError(`Import failed, the previous directory is kept: ${(error as Error).message}`)
  } finally {
    await checkpoints?.close()
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`)
    db.pragma(`cache_size = ${cacheSize}`)
  }
}

/** One transaction: the old live tables go, the staging ones take their names. Readers see one or the other. */
function goLive(db: Db, release: number, summary: ImportSummary, now: () => number): void {
  db.transaction(() => {
    for (const table of RELEASE_TABLES) db.exec(`DROP TABLE ${table}`)
    for (const table of RELEASE_TABLES) db.exec(`ALTER TABLE ${table}__r${release} RENAME TO ${table}`)
    db.prepare("UPDATE directory_releases SET state = 'replaced' WHERE state = 'active'").run()
    db.prepare(
      "UPDATE directory_releases SET state = 'active', finished_at = ?, summary = ? WHERE id = ?",
    ).run(
      new Date(now()).toISOString(),
      JSON.stringify({ types: summary.types, ignored: summary.ignored, skipped: summary.skipped }),
      release,
    )
  }).immediate()
}

/** A whole JSON document: one resource, or a Bundle whose entries' resources are taken (numbered from 1). */
async function readDocument(
  stream: AsyncIterable<Buffer>,
  source: string,
  take: (source: string, line: number, json: string, parsed: unknown) => void,
  problem: (source: string, line: number, message: string) => void,
  commitFull: () => Promise<void>,
): Promise<void> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk)
  let document: unknown
  try {
    document = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch (error) {
    throw new SourceError(`${source}: not a valid JSON document (${(error as Error).message})`)
  }
  const bundle = document as { resourceType?: unknown; entry?: unknown }
  if (bundle?.resourceType !== 'Bundle') {
    take(source, 1, JSON.stringify(document), document)
    return
  }
  const entries = Array.isArray(bundle.entry) ? bundle.entry : []
  for (const [index, entry] of entries.entries()) {
    const resource = (entry as { resource?: unknown } | null)?.resource
    if (resource === undefined) problem(source, index + 1, 'Bundle entry without a resource')
    else take(source, index + 1, JSON.stringify(resource), resource)
    await commitFull()
  }
}
