import { BulkLoader, type LoadOps, type LoadStatement } from '../../db/bulkLoader.js'
import {
  deleteDuplicatesSql,
  duplicatesSql,
  KEPT_DEFLATE_MIN_BYTES,
  releaseIndexesSql,
  releaseTalliesSql,
  releaseKeySql,
  releaseTablesSql,
  type StoreLayout,
  type TextTable,
  textBulkLoadSql,
  textMergeSql,
  textTableKey,
} from './schema.js'

/** A resource the release already held: its type and id, and where it came from. */
export interface Duplicate {
  type: string
  id: string
  /** The source's position in the import's list. */
  source: number
  line: number
}

/** Compressing a national plan release (1 GB) at this level takes its loading thread 2-3 s; level 6, 5 s. */
const KEPT_DEFLATE_LEVEL = 2
/** Bounded, so memory stays flat whatever the release size. */
const LOAD_CACHE_KIB = 32 * 1024
/** As the main file's (see db/open.ts): resources are 1.5-3 KB of JSON each. */
const PAGE_SIZE = 16_384
/**
 * A batch goes to the writing thread at this many bytes of resources, if not at its record count before:
 * a few hundred records, enough to make the message's cost small, few enough that what is in flight is too.
 */
const BATCH_BYTES = 1 << 20
/**
 * A batch's buffer: past BATCH_BYTES, room for the last resource as a string at three bytes a unit, so that
 * a built resource of up to a megabyte is written in without being measured or the buffer grown.
 */
const BATCH_ROOM = 4 * BATCH_BYTES
/** Batches handed to the writing thread and not yet written: two keep it busy while this thread parses. */
const MAX_IN_FLIGHT = 2
/** Duplicates read back at a time, so that a release imported twice over does not come back in one message. */
const DUPLICATES_PAGE = 10_000

/** The release file's inserts, by index: resource, token, reference, then one per full-text table. */
const RESOURCE = 0
const TOKEN = 1
const REF = 2

function statementsOf(layout: StoreLayout): {
  statements: LoadStatement[]
  /** Per type, the insert of each of its full-text tables, in the order its index derives their texts. */
  textStatements: Map<string, number[]>
} {
  const statements: LoadStatement[] = [
    {
      sql: `INSERT INTO ${layout.resource} (rid, type, id, json, source, line, gz, gz_crc) VALUES (?, ?, ?, CAST(? AS TEXT), ?, ?, ?, ?)`,
      bytes: 3,
      deflated: { at: 6, minBytes: KEPT_DEFLATE_MIN_BYTES, level: KEPT_DEFLATE_LEVEL },
    },
    { sql: `INSERT INTO ${layout.token} (param, system, code, rid) VALUES (?, ?, ?, ?)` },
    { sql: `INSERT INTO ${layout.ref} (param, target, rid) VALUES (?, ?, ?)` },
  ]
  const textStatements = new Map<string, number[]>()
  for (const [type, index] of layout.indexes) {
    textStatements.set(
      type,
      index.texts.map(({ tokenizer }) => {
        const { table, columns } = layout.textTables.get(textTableKey(type, tokenizer)) as TextTable
        statements.push({
          sql: `INSERT INTO ${table} (rowid, ${columns.join(', ')}) VALUES (?, ${columns.map(() => '?').join(', ')})`,
        })
        return statements.length - 1
      }),
    )
  }
  return { statements, textStatements }
}

/**
 * Writes one release's file: resources as their source's bytes, with the search rows derived from them, in
 * batches to a BulkLoader thread, at most MAX_IN_FLIGHT ahead of it. The release holds each type and id once:
 * the first to come; finish() reports the others (`onDuplicate`) and leaves them out.
 */
export class ReleaseWriter {
  readonly #loader: BulkLoader
  readonly #textStatements: Map<string, number[]>
  #ops: LoadOps = []
  #bytes = Buffer.allocUnsafeSlow(BATCH_ROOM)
  #used = 0
  #records = 0
  #rid = 0
  readonly #inFlight: Promise<void>[] = []
  #failure: Error | undefined

  constructor(
    path: string,
    private readonly layout: StoreLayout,
    private readonly batchSize: number,
  ) {
    const { statements, textStatements } = statementsOf(layout)
    this.#textStatements = textStatements
    this.#loader = new BulkLoader(path, {
      schema: releaseTablesSql(layout) + textBulkLoadSql(layout),
      statements,
      pageSize: PAGE_SIZE,
      cacheKib: LOAD_CACHE_KIB,
    })
  }

  /**
   * Adds one resource of `type` and `id` from line `line` of source number `source`, its text being the
   * bytes `data[start, end)`, or a string (written into the batch as UTF-8, with no buffer of its own
   * between). Returns a promise, to await before the next, when that filled a batch and the writing
   * thread is MAX_IN_FLIGHT behind.
   */
  add(
    type: string,
    id: string,
    resource: Record<string, unknown>,
    origin: { source: number; line: number },
    text: { data: Uint8Array; start: number; end: number } | string,
  ): Promise<void> | undefined {
    let length: number
    if (typeof text === 'string') {
      // Three bytes a UTF-16 unit at most: when that fits, one pass writes it; otherwise it is measured first.
      if (this.#bytes.length - this.#used < text.length * 3) this.#reserve(Buffer.byteLength(text))
      length = this.#bytes.write(text, this.#used)
    } else {
      length = text.end - text.start
      this.#reserve(length)
      this.#bytes.set(text.data.subarray(text.start, text.end), this.#used)
    }
    const rid = ++this.#rid
    const ops = this.#ops
    ops.push(RESOURCE, 7, rid, type, id, this.#used, this.#used + length, origin.source, origin.line)
    this.#used += length
    const rows = this.layout.indexes.get(type)?.derive(resource)
    if (rows) {
      for (const [param, system, code] of rows.tokens) ops.push(TOKEN, 4, param, system, code, rid)
      for (const [param, target] of rows.refs) ops.push(REF, 3, param, target, rid)
      if (rows.texts) {
        const inserts = this.#textStatements.get(type) as number[]
        rows.texts.forEach((texts, table) =>
          ops.push(inserts[table] as number, texts.length + 1, rid, ...texts),
        )
      }
    }
    this.#records++
    return this.#records >= this.batchSize || this.#used >= BATCH_BYTES ? this.#send() : undefined
  }

  /**
   * Writes what is left, removes duplicates (each passed to `onDuplicate`, in the order they came), merges
   * the full-text tables, builds the indexes, closes and syncs the file. Resolves with the number of
   * duplicates removed.
   */
  async finish(onDuplicate: (duplicate: Duplicate) => void): Promise<number> {
    await this.#send()
    await Promise.all(this.#inFlight)
    if (this.#failure) throw this.#failure
    const loader = this.#loader
    await loader.loaded()
    await loader.exec(releaseKeySql(this.layout))
    await loader.exec(duplicatesSql(this.layout))
    let duplicates = 0
    for (;;) {
      const page = await loader.all<Duplicate>(
        'SELECT type, id, source, line FROM temp.duplicate WHERE rowid > ? ORDER BY rowid LIMIT ?',
        [duplicates, DUPLICATES_PAGE],
      )
      for (const duplicate of page) onDuplicate(duplicate)
      duplicates += page.length
      if (page.length < DUPLICATES_PAGE) break
    }
    if (duplicates > 0) await loader.exec(deleteDuplicatesSql(this.layout))
    await loader.exec(textMergeSql(this.layout))
    await loader.exec(releaseIndexesSql(this.layout))
    await loader.exec(releaseTalliesSql(this.layout))
    await loader.close()
    return duplicates
  }

  /** Stops writing and removes the file. */
  async abort(): Promise<void> {
    await Promise.all(this.#inFlight)
    await this.#loader.abort()
  }

  /** Room for `length` more bytes in the batch. */
  #reserve(length: number): void {
    if (this.#used + length <= this.#bytes.length) return
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#bytes.length * 2, this.#used + length))
    this.#bytes.copy(grown, 0, 0, this.#used)
    this.#bytes = grown
  }

  async #send(): Promise<void> {
    if (this.#records > 0) {
      this.#inFlight.push(
        this.#loader.write(this.#ops, this.#bytes.subarray(0, this.#used)).catch((error: Error) => {
          this.#failure ??= error
        }),
      )
      this.#ops = []
      this.#bytes = Buffer.allocUnsafeSlow(BATCH_ROOM)
      this.#used = 0
      this.#records = 0
    }
    if (this.#inFlight.length > MAX_IN_FLIGHT) await this.#inFlight.shift()
    if (this.#failure) throw this.#failure
  }
}
