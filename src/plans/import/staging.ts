import { rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'

/**
 * Where an import's rows wait until every file is read: a SQLite file beside the store, never in memory (a
 * national Benefits and Cost Sharing file is 1.6 million rows, in no order that can be relied on). Plans are
 * then built one at a time from it. It goes with the import, whatever its end.
 */
export class Staging {
  readonly db: Database.Database
  readonly #path: string

  constructor(workDir: string) {
    this.#path = join(workDir, `.svc-plans-staging-${process.pid}-${Date.now()}.db`)
    this.db = new Database(this.#path)
    // Scratch data: nothing to recover after a crash, so no journal and no syncs.
    this.db.pragma('journal_mode = OFF')
    this.db.pragma('synchronous = OFF')
    this.db.pragma('cache_size = -32768')
    this.db.exec(`
      CREATE TABLE variant (year INTEGER NOT NULL, plan TEXT NOT NULL, variant TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE benefit (year INTEGER NOT NULL, variant TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE area (year INTEGER NOT NULL, state TEXT NOT NULL, issuer TEXT NOT NULL, area TEXT NOT NULL, whole INTEGER NOT NULL, county TEXT, partial INTEGER NOT NULL, zips TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL);
      CREATE TABLE network (year INTEGER NOT NULL, state TEXT NOT NULL, issuer TEXT NOT NULL, network TEXT NOT NULL, name TEXT NOT NULL, url TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL);
      CREATE TABLE ma_plan (year INTEGER, contract TEXT NOT NULL, plan TEXT NOT NULL, segment TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE ma_area (year INTEGER, contract TEXT NOT NULL, plan TEXT NOT NULL, segment TEXT NOT NULL, ssa TEXT NOT NULL, county TEXT NOT NULL, state TEXT NOT NULL, partial INTEGER NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL);
      CREATE TABLE ma_landscape (year INTEGER NOT NULL, contract TEXT NOT NULL, plan TEXT NOT NULL, segment TEXT NOT NULL, state TEXT NOT NULL, county TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, data TEXT NOT NULL);
    `)
  }

  /** Once every file is in: the indexes the build reads by, built in one sorted pass each. */
  index(): void {
    this.db.exec(`
      CREATE INDEX variant_plan ON variant (year, plan, variant);
      CREATE INDEX benefit_variant ON benefit (variant, year);
      CREATE INDEX area_key ON area (year, state, issuer, area);
      CREATE INDEX network_key ON network (year, state, issuer, network);
      CREATE INDEX ma_plan_key ON ma_plan (year, contract, plan, segment);
      CREATE INDEX ma_area_key ON ma_area (contract, plan, segment);
      CREATE INDEX ma_landscape_key ON ma_landscape (year, contract, plan, segment);
    `)
  }

  close(): void {
    this.db.close()
    for (const suffix of ['', '-journal']) rmSync(`${this.#path}${suffix}`, { force: true })
  }
}
