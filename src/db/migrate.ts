import type Database from 'better-sqlite3'
import { MIGRATIONS } from './migrations.js'

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * Applies every migration above the file's `user_version`, each in its own IMMEDIATE transaction so that
 * two processes opening a fresh file at once apply each step exactly once.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const ordered = [...migrations].sort((a, b) => a.version - b.version)
  let applied = 0
  for (const migration of ordered) {
    const step = db.transaction(() => {
      const current = db.pragma('user_version', { simple: true }) as number
      if (current >= migration.version) return false
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
      return true
    })
    if (step.immediate()) applied++
  }
  return applied
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number
}
