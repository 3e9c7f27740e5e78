import { readdirSync, rmSync } from 'node:fs'
import { basename, dirname, extname } from 'node:path'
import Database from 'better-sqlite3'
import type { Db } from '../../db/open.js'
import { UserError } from '../../userError.js'
import { type ActiveRelease, activeRelease, releaseFileName, releasePath, releasesTable } from './releases.js'
import { type Duplicate, ReleaseWriter } from './releaseWriter.js'
import type { StoreLayout } from './schema.js'

export class ImportError extends UserError {
  override name = 'ImportError'
}

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

/** A release file and the side files SQLite may leave beside it (a killed import's journal). */
function removeReleaseFiles(db: Db, file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) {
    try {
      rmSync(releasePath(db.name, `${file}${suffix}`), { force: true })
    } catch {
      // Still open somewhere (Windows): a later import tries again.
    }
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Files of releases no longer served, side files included, and any file of this store's release naming
 * beside the main file that no release in the table is loading or serving (what an import killed before
 * its row was written left).
 */
function removeOldFiles(db: Db, store: string): void {
  const releases = releasesTable(store)
  const files = db
    .prepare(`SELECT file FROM ${releases} WHERE file IS NOT NULL AND state IN ('replaced', 'failed')`)
    .pluck()
    .all() as string[]
  for (const file of files) removeReleaseFiles(db, file)
  const kept = new Set(
    db
      .prepare(`SELECT file FROM ${releases} WHERE file IS NOT NULL AND state IN ('active', 'loading')`)
      .pluck()
      .all() as string[],
  )
  const extension = extname(db.name)
  const pattern = new RegExp(
    `^${escapeRegExp(basename(db.name, extension))}\\.${store}-\\d+${escapeRegExp(extension)}(-journal|-wal|-shm)?$`,
  )
  for (const name of readdirSync(dirname(db.name))) {
    const match = pattern.exec(name)
    if (!match) continue
    const file = name.slice(0, name.length - (match[1]?.length ?? 0))
    if (!kept.has(file)) removeReleaseFiles(db, file)
  }
}

/** Imports that died midway: their release goes to failed and its file (or, before files, tables) away. */
function clearDebris(db: Db, layout: StoreLayout): void {
  const releases = releasesTable(layout.declaration.name)
  const loading = db.prepare(`SELECT id, pid, file FROM ${releases} WHERE state = 'loading'`).all() as {
    id: number
    pid: number | null
    file: string | null
  }[]
  for (const release of loading) {
    if (release.pid !== process.pid && alive(release.pid)) continue
    if (release.file === null) {
      for (const table of layout.tables) db.exec(`DROP TABLE IF EXISTS ${table}__r${release.id}`)
    }
    db.prepare(`UPDATE ${releases} SET state = 'failed' WHERE id = ?`).run(release.id)
  }
  removeOldFiles(db, layout.declaration.name)
}

/** A resource of a release as stored: its text is what the publisher sent. */
export interface StoredRecord {
  type: string
  id: string
  json: string
}

/**
 * The resources of a store's live release, in the order they were written, each with the token codes it is
 * indexed under for `param` (a partition key, say): read from the release file on a connection of its own,
 * so that an import can carry part of the live release into the next.
 */
export function* liveReleaseRecords(
  db: Db,
  layout: StoreLayout,
  param: number,
): Generator<StoredRecord & { codes: string[] }> {
  const live = activeRelease(db, layout.declaration.name)
  if (!live?.file) return
  const file = new Database(releasePath(db.name, live.file), { readonly: true, fileMustExist: true })
  try {
    const codes = file.prepare(`SELECT code FROM ${layout.token} WHERE param = ? AND rid = ?`).pluck()
    for (const row of file
      .prepare(`SELECT rid, type, id, json FROM ${layout.resource} ORDER BY rid`)
      .iterate() as IterableIterator<StoredRecord & { rid: number }>) {
      yield { type: row.type, id: row.id, json: row.json, codes: codes.all(param, row.rid) as string[] }
    }
  } finally {
    file.close()
  }
}

/**
 * One release of a store being built: a `loading` row in the store's release table, and a file of its own
 * written by a ReleaseWriter. `goLive` makes it the served release in one commit of the main file; `abort`
 * marks it failed and removes the file. Until one of them, the previous release serves untouched.
 */
export class ReleaseBuild {
  readonly release: number
  /** The release that was live when the build began: what `goLive` replaces. */
  readonly replaces: ActiveRelease | undefined
  readonly #writer: ReleaseWriter
  readonly #releases: string

  constructor(
    private readonly db: Db,
    private readonly layout: StoreLayout,
    options: { sourceNames: readonly string[]; startedAt: number; batchSize?: number },
  ) {
    const store = layout.declaration.name
    this.#releases = releasesTable(store)
    clearDebris(db, layout)
    this.replaces = activeRelease(db, store)
    this.release = db
      .transaction(() => {
        const id = Number(
          db
            .prepare(
              `INSERT INTO ${this.#releases} (state, pid, started_at, sources) VALUES ('loading', ?, ?, ?)`,
            )
            .run(process.pid, new Date(options.startedAt).toISOString(), JSON.stringify(options.sourceNames))
            .lastInsertRowid,
        )
        db.prepare(`UPDATE ${this.#releases} SET file = ? WHERE id = ?`).run(
          releaseFileName(db.name, store, id),
          id,
        )
        return id
      })
      .immediate()
    this.#writer = new ReleaseWriter(
      releasePath(db.name, releaseFileName(db.name, store, this.release)),
      layout,
      options.batchSize ?? 2_000,
    )
  }

  /**
   * Adds one resource; `text` is its bytes as published (`data[start, end)`) or its text as stored, or,
   * absent, its JSON. Returns a promise to await before the next when the writing thread is behind.
   */
  add(
    type: string,
    id: string,
    resource: Record<string, unknown>,
    origin: { source: number; line: number },
    text?: { data: Uint8Array; start: number; end: number } | string,
  ): Promise<void> | undefined {
    return this.#writer.add(type, id, resource, origin, text ?? JSON.stringify(resource))
  }

  /** Writes what is left and builds the indexes; duplicates (after the first of a type and id) are dropped. */
  finish(onDuplicate: (duplicate: Duplicate) => void): Promise<number> {
    return this.#writer.finish(onDuplicate)
  }

  /**
   * One commit of the main file names the new release active, with `alsoInCommit` run inside it (a domain's
   * own bookkeeping). With `exclusive`, it fails when another release went live since the build began (an
   * import that carried part of the live release over must not drop what a concurrent one made live).
   */
  goLive(
    summary: unknown,
    finishedAt: number,
    options: { exclusive?: boolean; alsoInCommit?: () => void } = {},
  ): void {
    const { db, layout } = this
    const store = layout.declaration.name
    db.transaction(() => {
      if (options.exclusive && activeRelease(db, store)?.id !== this.replaces?.id) {
        throw new ImportError(
          `Another ${store} import went live while this one ran; nothing changed: run it again`,
        )
      }
      for (const table of layout.tables) db.exec(`DROP TABLE IF EXISTS main.${table}`)
      db.prepare(`UPDATE ${this.#releases} SET state = 'replaced' WHERE state = 'active'`).run()
      db.prepare(
        `UPDATE ${this.#releases} SET state = 'active', finished_at = ?, summary = ? WHERE id = ?`,
      ).run(new Date(finishedAt).toISOString(), JSON.stringify(summary), this.release)
      options.alsoInCommit?.()
    }).immediate()
    removeOldFiles(db, store)
  }

  /** Stops writing, removes the file and marks the release failed. */
  async abort(failedAt: number): Promise<void> {
    await this.#writer.abort()
    try {
      this.db
        .prepare(`UPDATE ${this.#releases} SET state = 'failed', finished_at = ? WHERE id = ?`)
        .run(new Date(failedAt).toISOString(), this.release)
    } catch {
      // The main file is locked (what failed may be going live): the next import clears it as debris.
    }
  }
}
