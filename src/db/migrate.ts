import type Database from 'better-sqlite3'
import { MIGRATIONS } from './migrations.js'

export interface Migration {
  version: number
  name: string
  sql: string
  /**
   * The step also reads or writes the live database (src/db/live.ts), attached as schema `live` for this step
   * only. ATTACH cannot run inside a transaction, so migrate() attaches before the step's BEGIN.
   */
  attachLive?: boolean
  /**
   * SQL answering 1 while this step's change is not in the file. Only for a step numbered below one already
   * shipped: files made in between are past its number, and without this it would never run on them.
   */
  missing?: string
}

export interface MigrateOptions {
  /** Path of the live database, its own schema already up to date; asked only when a pending step needs it. */
  livePath?: () => string
}

/**
 * Applies every migration above the file's `user_version` (and any at or below it whose `missing` probe
 * answers 1), each in its own IMMEDIATE transaction so that two processes opening a fresh file at once apply
 * each step exactly once.
 */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  options: MigrateOptions = {},
): number {
  const ordered = [...migrations].sort((a, b) => a.version - b.version)
  let applied = 0
  const due = (migration: Migration) =>
    schemaVersion(db) < migration.version ||
    (migration.missing !== undefined && db.prepare(migration.missing).pluck().get() === 1)
  for (const migration of ordered) {
    // Cheap test outside the lock; the step tests again inside it, where it counts.
    if (!due(migration)) continue
    const step = db.transaction(() => {
      if (!due(migration)) return false
      db.exec(migration.sql)
      if (schemaVersion(db) < migration.version) db.pragma(`user_version = ${migration.version}`)
      return true
    })
    if (migration.attachLive) {
      if (!options.livePath) throw new Error(`Migration ${migration.name} needs the live database`)
      db.prepare('ATTACH DATABASE ? AS live').run(options.livePath())
    }
    try {
      if (step.immediate()) applied++
    } finally {
      if (migration.attachLive) db.exec('DETACH DATABASE live')
    }
  }
  return applied
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number
}
