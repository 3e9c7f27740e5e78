import type { StoreShape, TextTokenizer } from './declaration.js'
import { compileTypeIndex, type TypeIndex } from './derive.js'

/** One full-text table of a release: its name, columns, tokenizer, and the type whose resources it holds. */
export interface TextTable {
  type: string
  tokenizer: TextTokenizer
  table: string
  columns: string[]
}

/** A store's tables and each type's compiled index, worked out once from its declaration. */
export interface StoreLayout {
  declaration: StoreShape
  resource: string
  token: string
  ref: string
  /** Full-text tables, by `textTableKey(type, tokenizer)`. */
  textTables: Map<string, TextTable>
  indexes: Map<string, TypeIndex>
  /** Every table of a release, the resource table first. */
  tables: string[]
}

export const textTableKey = (type: string, tokenizer: TextTokenizer = 'words') => `${type}/${tokenizer}`

/** Table names: words tables kept their first name (`<prefix>_name_<type>`) so older release files still read. */
const TABLE_INFIX: Record<TextTokenizer, string> = { words: 'name', trigram: 'tri' }

export function storeLayout(declaration: StoreShape): StoreLayout {
  const { prefix } = declaration
  const indexes = new Map(declaration.types.map((type) => [type.type, compileTypeIndex(type)]))
  const textTables = new Map<string, TextTable>()
  for (const [type, index] of indexes) {
    for (const { tokenizer, columns } of index.texts) {
      const table = `${prefix}_${TABLE_INFIX[tokenizer]}_${type.toLowerCase()}`
      textTables.set(textTableKey(type, tokenizer), { type, tokenizer, table, columns })
    }
  }
  const resource = `${prefix}_resource`
  const token = `${prefix}_token`
  const ref = `${prefix}_ref`
  return {
    declaration,
    resource,
    token,
    ref,
    textTables,
    indexes,
    tables: [resource, token, ref, ...[...textTables.values()].map(({ table }) => table)],
  }
}

/**
 * A resource of at least this many bytes is kept compressed beside its text too (`gz`: deflate data ended
 * by a sync flush, src/http/gzipSplice.ts; `gz_crc`: the text's CRC-32), so that a read or a page of such
 * resources is gzipped by splicing, without compressing or even reading its megabyte again. Smaller ones
 * are cheap to compress with their page. Files built before `gz_crc` are read as if they kept neither: their
 * resources are compressed as they are sent.
 */
export const KEPT_DEFLATE_MIN_BYTES = 16 * 1024

/**
 * The shape of the release files made now, kept in their `user_version` (files before it read 0). 1: a
 * search's marked matches are indexed under the mark's system (SearchDeclaration.mark). 2: reference rows
 * are indexed by resource too, so a forward `_include` reads a page's references without parsing it. 3: the
 * matches of each reference and token value held by more than TALLIED_ABOVE resources are counted at build.
 */
export const RELEASE_FORMAT = 3
export const MARKS_INDEXED_FROM = 1
export const REFERENCES_BY_RESOURCE_FROM = 2
export const TALLIES_FROM = 3

/**
 * A search's first page counts up to this many matches itself; a search by one reference or token value
 * matched more often reads its count from the release's tallies, made once as the release is built (a
 * network's 24,479 affiliations took 1.75 ms to count at each first page).
 */
export const TALLIED_ABOVE = 1000

/**
 * DDL of a release file, run before its rows go in. `source` (the import's source, by position) and `line` say
 * where each resource came from, to report a duplicate. `json` goes last: a row's columns are read in order
 * through its overflow pages, so `gz` after a 150 KB text would cost reading that text. Release files are never altered once built: a change
 * here applies to releases imported from then on (and to the main file's Questionnaire tables, made with the
 * file), so the reader must still read files of the previous shape (or the change must ask for a re-import).
 */
export function releaseTablesSql(layout: StoreLayout): string {
  // contentless: the resource JSON is the content; contentless_delete, so that a duplicate can go. Words:
  // unicode61 folds case and diacritics. FTS5 reads a prefix query from a prefix index only when its length
  // is one the index keeps; otherwise it first copies the whole doclist of every term starting with it into
  // one, in memory: thousands of terms for a short prefix, and the whole doclists of a few for a whole word
  // asked as a prefix, which is what a name search sends (`name=jeromy hyatt`: 0.50 → 0.31 ms over 2,000,000
  // practitioners with lengths up to 8, the length of most names). Trigrams: a phrase of 3 characters or
  // more matches as a substring.
  const tokenize: Record<TextTokenizer, string> = {
    words: `tokenize='unicode61 remove_diacritics 2', prefix='2 3 4 5 6 7 8'`,
    trigram: `tokenize='trigram remove_diacritics 1'`,
  }
  const texts = [...layout.textTables.values()].map(
    ({ table, columns, tokenizer }) =>
      `CREATE VIRTUAL TABLE ${table} USING fts5(${columns.join(', ')}, content='', contentless_delete=1, ${tokenize[tokenizer]});`,
  )
  return `
    PRAGMA user_version = ${RELEASE_FORMAT};
    CREATE TABLE ${layout.resource} (
      rid INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      id TEXT NOT NULL,
      source INTEGER NOT NULL,
      line INTEGER NOT NULL,
      gz BLOB,
      gz_crc INTEGER,
      json TEXT NOT NULL
    );
    CREATE TABLE ${layout.token} (param INTEGER NOT NULL, code TEXT NOT NULL, system TEXT NOT NULL, rid INTEGER NOT NULL);
    CREATE TABLE ${layout.ref} (param INTEGER NOT NULL, target TEXT NOT NULL, rid INTEGER NOT NULL);
    ${texts.join('\n    ')}
  `
}

/**
 * The (type, id) key, built once the rows are in: one sorted build, where keeping it during the load costs a
 * random B-tree insert per record once it outgrows the cache (a national release's ids come in no particular
 * order). Not UNIQUE: building that would fail on a duplicate, and undoing a failed statement needs a journal
 * the load goes without. The duplicates query finds them through it; once they are gone it is unique.
 */
export const releaseKeySql = (layout: StoreLayout) =>
  `CREATE INDEX ${layout.resource}_key ON ${layout.resource} (type, id)`

/**
 * Into temp.duplicate, in the order they came: every resource after the first of its type and id. The scan
 * reads the key alone (it covers type, id and rid); rows are read only for the duplicates.
 */
export const duplicatesSql = ({ resource }: StoreLayout) => `
  CREATE TEMP TABLE duplicate AS
  SELECT d.rid, d.type, d.id, d.source, d.line
  FROM (SELECT type, id, min(rid) AS first FROM ${resource} GROUP BY type, id HAVING count(*) > 1) AS k
  JOIN ${resource} d ON d.type = k.type AND d.id = k.id AND d.rid > k.first
  ORDER BY d.rid
`

/** Removes the resources listed in temp.duplicate and their index rows. */
export const deleteDuplicatesSql = (layout: StoreLayout) =>
  layout.tables
    .map(
      (table) =>
        `DELETE FROM ${table} WHERE ${table === layout.token || table === layout.ref ? 'rid' : 'rowid'} IN (SELECT rid FROM temp.duplicate);`,
    )
    .join('\n')

/**
 * How many resources hold each reference target and each token code (under any system) of a parameter,
 * where more than TALLIED_ABOVE do: after the indexes, whose order the counts are read in. A resource's
 * reference rows are unique (derive.ts), its token rows only per system.
 */
export const releaseTalliesSql = ({ ref, token }: StoreLayout) => `
  CREATE TABLE ${ref}_tally (param INTEGER NOT NULL, target TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (param, target)) WITHOUT ROWID;
  INSERT INTO ${ref}_tally SELECT param, target, count(*) FROM ${ref}
    GROUP BY param, target HAVING count(*) > ${TALLIED_ABOVE};
  CREATE TABLE ${token}_tally (param INTEGER NOT NULL, code TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (param, code)) WITHOUT ROWID;
  INSERT INTO ${token}_tally SELECT param, code, count(DISTINCT rid) FROM ${token}
    GROUP BY param, code HAVING count(DISTINCT rid) > ${TALLIED_ABOVE};
`

/**
 * For a release file's bulk load, after its tables: its full-text tables do not merge their segments as they
 * grow (FTS5's automerge), only where 64 pile up on one level (crisismerge); textMergeSql merges them all
 * once the rows are in. Loaded alone, the 2,000,000 practitioners' names of the national bench took 37 s
 * merging as they grew and left 20 segments, each looked into for every word a search asks; this way 30 s and
 * one segment. The bench release's name index (9 segments) merged: a two-word name search 0.23 → 0.15 ms. Not
 * for the main file's Questionnaire tables, which grow import by import.
 */
export const textBulkLoadSql = (layout: StoreLayout) =>
  eachTextTable(
    layout,
    (table) => `INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 0);
  INSERT INTO ${table} (${table}, rank) VALUES ('crisismerge', 64);`,
  )

/** Merges each full-text table into one segment (see textBulkLoadSql), after the duplicates went. */
export const textMergeSql = (layout: StoreLayout) =>
  eachTextTable(layout, (table) => `INSERT INTO ${table} (${table}) VALUES ('optimize');`)

/** One statement (or a few) per full-text table of the layout. */
const eachTextTable = ({ textTables }: StoreLayout, sql: (table: string) => string) =>
  [...textTables.values()].map(({ table }) => sql(table)).join('\n')

/** Built after the bulk load: one sorted build is far cheaper than maintaining them row by row. */
export const releaseIndexesSql = (layout: StoreLayout) => `
  CREATE INDEX ${layout.token}_lookup ON ${layout.token} (param, code, rid);
  CREATE INDEX ${layout.ref}_lookup ON ${layout.ref} (param, target, rid);
  CREATE INDEX ${layout.ref}_of ON ${layout.ref} (rid, param);
`
