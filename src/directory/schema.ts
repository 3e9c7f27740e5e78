import type { Migration } from '../db/migrate.js'
import { NAME_COLUMNS, type NamedType, nameTable } from './model.js'

/** The tables of one release, in its own file (see releases.ts). */
export const RELEASE_TABLES = [
  'dir_resource',
  'dir_token',
  'dir_ref',
  ...(Object.keys(NAME_COLUMNS) as NamedType[]).map(nameTable),
]

/**
 * DDL of a release file, run before its rows go in. `source` (the import's source, by position) and `line` say
 * where each resource came from, to report a duplicate. Release files are never altered once built: a change
 * here applies to releases imported from then on, so the store must still read files of the previous shape
 * (or the change must ask for a re-import).
 */
export function releaseTablesSql(): string {
  const names = (Object.entries(NAME_COLUMNS) as [NamedType, readonly string[]][]).map(
    ([type, columns]) =>
      // contentless: the resource JSON is the content; contentless_delete, so that a duplicate can go;
      // unicode61 folds case and diacritics; 2- and 3-character prefix indexes keep short prefix queries
      // from merging thousands of terms
      `CREATE VIRTUAL TABLE ${nameTable(type)} USING fts5(${columns.join(', ')}, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3');`,
  )
  return `
    CREATE TABLE dir_resource (
      rid INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      id TEXT NOT NULL,
      json TEXT NOT NULL,
      source INTEGER NOT NULL,
      line INTEGER NOT NULL
    );
    CREATE TABLE dir_token (param INTEGER NOT NULL, code TEXT NOT NULL, system TEXT NOT NULL, rid INTEGER NOT NULL);
    CREATE TABLE dir_ref (param INTEGER NOT NULL, target TEXT NOT NULL, rid INTEGER NOT NULL);
    ${names.join('\n    ')}
  `
}

/**
 * The (type, id) key, built once the rows are in: one sorted build, where keeping it during the load costs a
 * random B-tree insert per record once it outgrows the cache (a national release's ids come in no particular
 * order). Not UNIQUE: building that would fail on a duplicate, and undoing a failed statement needs a journal
 * the load goes without. DUPLICATES_SQL finds them through it; once they are gone it is unique.
 */
export const RELEASE_KEY_SQL = 'CREATE INDEX dir_resource_key ON dir_resource (type, id)'

/**
 * Into temp.duplicate, in the order they came: every resource after the first of its type and id. The scan
 * reads the key alone (it covers type, id and rid); rows are read only for the duplicates.
 */
export const DUPLICATES_SQL = `
  CREATE TEMP TABLE duplicate AS
  SELECT d.rid, d.type, d.id, d.source, d.line
  FROM (SELECT type, id, min(rid) AS first FROM dir_resource GROUP BY type, id HAVING count(*) > 1) AS k
  JOIN dir_resource d ON d.type = k.type AND d.id = k.id AND d.rid > k.first
  ORDER BY d.rid
`

/** Removes the resources listed in temp.duplicate and their search rows. */
export const DELETE_DUPLICATES_SQL = RELEASE_TABLES.map(
  (table) =>
    `DELETE FROM ${table} WHERE ${table === 'dir_resource' || table.startsWith('dir_name_') ? 'rowid' : 'rid'} IN (SELECT rid FROM temp.duplicate);`,
).join('\n')

/** Built after the bulk load: one sorted build is far cheaper than maintaining them row by row. */
export const RELEASE_INDEXES_SQL = `
  CREATE INDEX dir_token_lookup ON dir_token (param, code, rid);
  CREATE INDEX dir_ref_lookup ON dir_ref (param, target, rid);
`

export const DIRECTORY_STEPS: Migration[] = [
  {
    legacyVersion: 20,
    name: 'releases',
    // As shipped, byte for byte (the release tables of that version lived in the main file; see release-files).
    sql: `
      -- state: loading (staging tables __r<id> being filled), active (the live tables), replaced, failed
      CREATE TABLE directory_releases (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL,
        pid INTEGER,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        sources TEXT NOT NULL,
        summary TEXT
      );
      
    CREATE TABLE dir_resource (
      rid INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      id TEXT NOT NULL,
      json TEXT NOT NULL
    );
    CREATE UNIQUE INDEX dir_resource_key__r0 ON dir_resource (type, id);
    CREATE TABLE dir_token (param INTEGER NOT NULL, code TEXT NOT NULL, system TEXT NOT NULL, rid INTEGER NOT NULL);
    CREATE TABLE dir_ref (param INTEGER NOT NULL, target TEXT NOT NULL, rid INTEGER NOT NULL);
    CREATE VIRTUAL TABLE dir_name_practitioner USING fts5(name, family, given, city, state, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
    CREATE VIRTUAL TABLE dir_name_organization USING fts5(name, city, state, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
    CREATE VIRTUAL TABLE dir_name_healthcareservice USING fts5(name, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
    CREATE VIRTUAL TABLE dir_name_endpoint USING fts5(name, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
  
      
    CREATE INDEX dir_token_lookup__r0 ON dir_token (param, code, rid);
    CREATE INDEX dir_ref_lookup__r0 ON dir_ref (param, target, rid);
  
    `,
  },
  {
    legacyVersion: 32,
    name: 'release-files',
    // Each release is now built in a file of its own, named here relative to the main file's folder. A release
    // without one (imported before this version) still lives in the main file's dir_* tables and serves from
    // there until the next import goes live, which drops them.
    sql: `ALTER TABLE directory_releases ADD COLUMN file TEXT;`,
  },
]
