import type Database from 'better-sqlite3'
import { STORE_SCHEMA } from '../../src/app/store.js'
import type { Step } from '../../src/db/migrate.js'

/** The main file's steps that had shipped when files were at `version`, in the order they then ran. */
export function stepsThrough(version: number, keep: (step: Step) => boolean = () => true): Step[] {
  return STORE_SCHEMA.main
    .filter((step) => step.legacyVersion !== undefined && step.legacyVersion <= version && keep(step))
    .sort((a, b) => (a.legacyVersion as number) - (b.legacyVersion as number))
}

/**
 * A file as a version before steps were recorded by name left it: `steps` applied, counted by
 * `user_version` alone (no record of names).
 */
export function writeNumberedFile(db: Database.Database, steps: readonly Step[], version: number): void {
  for (const step of steps) db.exec(step.sql)
  db.pragma(`user_version = ${version}`)
}

/** Every step's full name, in the order the store lists them. */
export const allSteps = (file: 'main' | 'live') => STORE_SCHEMA[file].map((step) => step.id)
