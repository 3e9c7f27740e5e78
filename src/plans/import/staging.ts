import { rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'

/**
 * A benefit row's BENEFIT_FIELDS are staged as one text, joined by a character no field of a plan file
 * holds: a third of the cost of a column each, in and out, over 1.6 million rows.
 */
const FIELD_SEPARATOR = '\u0000'

/** A benefit row's fields as staged; undefined when a field holds the separator (a NUL: not text). */
export function packedFields(fields: readonly string[]): string | undefined {
  return fields.some((field) => field.includes(FIELD_SEPARATOR)) ? undefined : fields.join(FIELD_SEPARATOR)
}

/** A staged benefit row: the file and line it came from, and its BENEFIT_FIELDS. */
export interface BenefitRow {
  file: number
  line: number
  fields: string[]
}

export interface SortedBenefits {
  /** The rows of `variant`; rows of earlier variants not asked for go to `orphan`. */
  take(variant: string, orphan: (row: BenefitRow & { variant: string }) => void): BenefitRow[]
  /** Every row left (variants after the last asked for) to `orphan`. */
  rest(orphan: (row: BenefitRow & { variant: string }) => void): void
  close(): void
}

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
      CREATE TABLE benefit (year INTEGER NOT NULL, variant TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, fields TEXT NOT NULL);
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
      CREATE INDEX area_key ON area (year, state, issuer, area);
      CREATE INDEX network_key ON network (year, state, issuer, network);
      CREATE INDEX ma_plan_key ON ma_plan (year, contract, plan, segment);
      CREATE INDEX ma_area_key ON ma_area (contract, plan, segment);
      CREATE INDEX ma_landscape_key ON ma_landscape (year, contract, plan, segment);
    `)
  }

  /**
   * One plan year's benefit rows in PlanId order, read in one pass: the build asks for each variant in turn,
   * in the same order, and rows of variants it never asks for are handed to `orphan`. Sorted by SQLite as
   * it reads (the file's order is no order), on a connection of its own so that the build's other reads can
   * run between.
   */
  sortedBenefits(year: number): SortedBenefits {
    const reader = new Database(this.#path, { readonly: true })
    const rows = reader
      .prepare(
        'SELECT variant, file, line, fields FROM benefit NOT INDEXED WHERE year = ? ORDER BY variant, rowid',
      )
      .raw()
      .iterate(year) as IterableIterator<[string, number, number, string]>
    let next = rows.next()
    const row = ([variant, file, line, fields]: [string, number, number, string]) => ({
      variant,
      file,
      line,
      fields: fields.split(FIELD_SEPARATOR),
    })
    return {
      take(variant, orphan) {
        const found: BenefitRow[] = []
        for (; !next.done && next.value[0] <= variant; next = rows.next()) {
          if (next.value[0] === variant) found.push(row(next.value))
          else orphan(row(next.value))
        }
        return found
      },
      rest(orphan) {
        for (; !next.done; next = rows.next()) orphan(row(next.value))
      },
      close() {
        rows.return?.()
        if (reader.open) reader.close()
      },
    }
  }

  close(): void {
    this.db.close()
    for (const suffix of ['', '-journal']) rmSync(`${this.#path}${suffix}`, { force: true })
  }
}
