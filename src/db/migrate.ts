import type Database from 'better-sqlite3'
import { UserError } from '../userError.js'

/** One schema step of a domain, as the domain declares it. */
export interface Migration {
  /** Unique within its domain and never changed once shipped: the file records the step by it. */
  name: string
  sql: string
  /**
   * Rows the step writes that SQL alone cannot make (resources with their derived index rows), in the
   * step's transaction, after `sql`.
   */
  apply?: (db: Database.Database) => void
  /**
   * The step also reads or writes the live database (src/db/live.ts), attached as schema `live` for this step
   * only. ATTACH cannot run inside a transaction, so migrate() attaches before the step's BEGIN.
   */
  attachLive?: boolean
  /**
   * The number the step had when files counted their steps by `user_version`. A file made then has every
   * step numbered up to its `user_version` applied, and is recorded so on its first open by this version.
   */
  legacyVersion?: number
  /**
   * SQL answering 1 while the step's change is not in the file: a step that was numbered below one already
   * shipped, which files made in between skipped although their `user_version` passed its number.
   */
  legacyMissing?: string
}

/** A step under its full name: `<domain>/<name>`. */
export interface Step extends Migration {
  id: string
}

/** Every domain's steps under their full names, in the order given. */
export function stepsOf(domains: readonly { name: string; steps?: readonly Migration[] }[]): Step[] {
  return domains.flatMap((domain) =>
    (domain.steps ?? []).map((step) => ({ ...step, id: `${domain.name}/${step.name}` })),
  )
}

export interface MigrateOptions {
  /** Path of the live database, its own schema already up to date; asked only when a pending step needs it. */
  livePath?: () => string
}

const RECORD = 'CREATE TABLE schema_steps (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)'

/**
 * Applies every step the file has not recorded, each in its own IMMEDIATE transaction that records it, so
 * that two processes opening a fresh file at once apply each step exactly once. Steps are recorded by name,
 * so two domains can never collide, and a step added below a shipped one still runs. Returns how many ran.
 * A file that records a step this version does not know is refused whole (NewerStoreError), before any step.
 */
export function migrate(db: Database.Database, steps: readonly Step[], options: MigrateOptions = {}): number {
  adoptNumberedFile(db, steps)
  const done = new Set(appliedSteps(db))
  refuseNewerFile(db, steps, done)
  let ran = 0
  for (const step of steps.filter((step) => !done.has(step.id))) {
    const run = db.transaction(() => {
      if (db.prepare('SELECT 1 FROM schema_steps WHERE id = ?').get(step.id)) return false
      db.exec(step.sql)
      step.apply?.(db)
      db.prepare('INSERT INTO schema_steps (id, applied_at) VALUES (?, ?)').run(
        step.id,
        new Date().toISOString(),
      )
      return true
    })
    if (step.attachLive) {
      if (!options.livePath) throw new Error(`Migration ${step.id} needs the live database`)
      db.prepare('ATTACH DATABASE ? AS live').run(options.livePath())
    }
    try {
      if (run.immediate()) ran++
    } finally {
      if (step.attachLive) db.exec('DETACH DATABASE live')
    }
  }
  return ran
}

/** A file that records steps this version does not know: a newer svc wrote it, in tables this code may misread. */
export class NewerStoreError extends UserError {}

/** Shown of the unknown steps; the rest are counted. */
const NAMED_UNKNOWN_STEPS = 3

function refuseNewerFile(db: Database.Database, steps: readonly Step[], done: ReadonlySet<string>): void {
  const known = new Set(steps.map((step) => step.id))
  const unknown = [...done].filter((id) => !known.has(id))
  if (unknown.length === 0) return
  const named = unknown.slice(0, NAMED_UNKNOWN_STEPS).join(', ')
  const more = unknown.length > NAMED_UNKNOWN_STEPS ? ` and ${unknown.length - NAMED_UNKNOWN_STEPS} more` : ''
  throw new NewerStoreError(
    `${db.name} was written by a newer version of svc: it records schema steps this version does not know (${named}${more}). Run that version of svc or a newer one; this one leaves the file unchanged.`,
  )
}

/**
 * A file made before steps were recorded by name counts them by `user_version`: on its first open, the steps
 * it holds by that count are recorded as applied (a step whose `legacyMissing` probe says its change is
 * absent is left to run). A new file starts with an empty record.
 */
function adoptNumberedFile(db: Database.Database, steps: readonly Step[]): void {
  const recorded = () =>
    db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_steps'").get() !==
    undefined
  if (recorded()) return
  db.transaction(() => {
    if (recorded()) return
    const version = db.pragma('user_version', { simple: true }) as number
    db.exec(RECORD)
    const record = db.prepare("INSERT INTO schema_steps (id, applied_at) VALUES (?, 'adopted')")
    for (const step of steps) {
      if (step.legacyVersion === undefined || step.legacyVersion > version) continue
      if (step.legacyMissing !== undefined && db.prepare(step.legacyMissing).pluck().get() === 1) continue
      record.run(step.id)
    }
  }).immediate()
}

/** The full names of the steps a file has recorded, in the order they were applied. */
export function appliedSteps(db: Database.Database): string[] {
  return db.prepare('SELECT id FROM schema_steps ORDER BY rowid').pluck().all() as string[]
}
