import { Command, Flags, type Interfaces } from '@oclif/core'
import { resolveAppConfig } from '../app/config.js'
import type { Config, ConfigOverrides } from '../config.js'
import { isBusy } from '../db/busy.js'
import { type Db, describeStoreError, isStoreUnavailable, type Store } from '../db/open.js'
import { openStore } from '../app/store.js'
import { yieldToServing } from './priority.js'
import { UserError } from '../userError.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof SvcCommand)['baseFlags'] & T['flags']
>

/**
 * How long a command's change waits for the main file's write lock. One transaction of a sync holds it for a
 * whole publisher (16 s for a national chain of 2,000,000 slots here), so SQLite's usual 5 s would fail an
 * account command that merely came during a background sync.
 */
const COMMAND_LOCK_WAIT_MS = 120_000
const LOCK_HELD = `Another process is writing to the store (an import or a sync): a change this command makes waits for it to finish (up to ${COMMAND_LOCK_WAIT_MS / 1000} s).`
/** A lock held shorter than this (another command's write) is waited for without a word. */
const LOCK_NOTICE_AFTER_MS = 1000

/** Whether another connection holds the file's write lock for longer than a moment; takes it for no time. */
function writeLockHeld(db: Db): boolean {
  const wait = db.pragma('busy_timeout', { simple: true }) as number
  db.pragma(`busy_timeout = ${LOCK_NOTICE_AFTER_MS}`)
  try {
    db.exec('BEGIN IMMEDIATE')
    db.exec('ROLLBACK')
    return false
  } catch (error) {
    if (isBusy(error)) return true
    throw error
  } finally {
    db.pragma(`busy_timeout = ${wait}`)
  }
}

/** Flags every command shares, config resolution, and the store; subcommands only parse, call src/ and print. */
export abstract class SvcCommand extends Command {
  static override enableJsonFlag = true
  static override baseFlags = {
    db: Flags.string({
      description: 'SQLite database file (env SVC_DB; default ./data/svc.db)',
      helpGroup: 'GLOBAL',
    }),
    config: Flags.string({
      description: 'JSON config file (env SVC_CONFIG; default ./svc.config.json when present)',
      helpGroup: 'GLOBAL',
    }),
  }

  #store: Store | undefined
  /** The store's path once the configuration named it: what a store error names. */
  #storePath: string | undefined

  protected async resolveConfig(overrides: ConfigOverrides): Promise<Config> {
    const config = await resolveAppConfig(overrides)
    this.#storePath = config.db
    return config
  }

  /**
   * Both files of the store (src/db/open.ts); `db` is the main one. Closed when the command ends. A command
   * that only `reads` never waits for the write lock, so it is not told about it either.
   */
  protected async openStore(
    flags: { db?: string; config?: string },
    { reads = false } = {},
  ): Promise<{ db: Db; store: Store; config: Config }> {
    const config = await this.resolveConfig({ db: flags.db, config: flags.config })
    this.#store = openStore(config, { busyTimeoutMs: COMMAND_LOCK_WAIT_MS })
    if (!reads && writeLockHeld(this.#store.db)) this.warn(LOCK_HELD)
    return { db: this.#store.db, store: this.#store, config }
  }

  /** The store of an import command, this process lowered below serving first (src/cli/priority.ts). */
  protected async openImportStore(flags: {
    db?: string
    config?: string
  }): Promise<{ db: Db; store: Store; config: Config }> {
    const opened = await this.openStore(flags)
    const warning = yieldToServing(opened.config)
    if (warning) this.warn(warning)
    return opened
  }

  protected override async catch(error: Error & { exitCode?: number }): Promise<unknown> {
    // Errors a user can fix: one line, no stack trace.
    if (error instanceof UserError) this.error(error.message, { exit: 2 })
    // The store's state (not a database, damaged, locked, full, unreadable), not a fault of svc: no stack either.
    if (isStoreUnavailable(error)) {
      const at = this.#storePath === undefined ? '' : ` at ${this.#storePath}`
      this.error(`Cannot use the store${at}: ${describeStoreError(error)}`, { exit: 1 })
    }
    return super.catch(error)
  }

  protected override async finally(error: Error | undefined): Promise<unknown> {
    this.#store?.close()
    return super.finally(error)
  }
}

/** Fixed-width text table for human output. */
export function formatTable(rows: Record<string, unknown>[], columns: string[]): string {
  const text = (value: unknown) => (value === null || value === undefined ? '-' : String(value))
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => text(row[column]).length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, index) => cell.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd()
  return [
    line(columns.map((column) => column.toUpperCase())),
    ...rows.map((row) => line(columns.map((c) => text(row[c])))),
  ].join('\n')
}
