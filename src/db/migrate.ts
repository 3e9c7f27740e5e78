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
}

export interface MigrateOptions {
  /** Path of the live database, its own schema already up to date; asked only when a pending step needs it. */
  livePath?: () => string
}

/**
 * Applies every migration above the file's `user_version`, each in its own IMMEDIATE transaction so that
 * two processes opening a fresh file at once apply each step exactly once.
 */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  options: MigrateOptions = {},
): number {
  const ordered = [...migrations].sort((a, b) => a.version - b.version)
  let applied = 0
  for (const migration of ordered) {
    // Cheap test outside the lock; the step tests again inside it, where it counts.
    if (schemaVersion(db) >= migration.version) continue
    const step = db.transaction(() => {
      const current = db.pragma('user_version', { simple: true }) as number
      if (current >= migration.version) return false
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
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
