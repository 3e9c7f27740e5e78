import type { Migration } from '../db/migrate.js'
import { NAME_COLUMNS, type NamedType, nameTable } from './model.js'

/** The tables one release fills. Staging copies carry a `__r<n>` suffix until the release goes live. */
export const RELEASE_TABLES = [
  'dir_resource',
  'dir_token',
  'dir_ref',
  ...(Object.keys(NAME_COLUMNS) as NamedType[]).map(nameTable),
]

/**
 * DDL of one release's tables. `suffix` is '' for the live names and `__r<n>` for staging; index names
 * always carry the release number, since they keep their names when the tables are renamed live.
 * Changing this shape needs a new migration that rebuilds the live tables (or asks for a re-import).
 */
export function releaseTablesSql(suffix: string, release: number): string {
  const names = (Object.entries(NAME_COLUMNS) as [NamedType, readonly string[]][]).map(
    ([type, columns]) =>
      // contentless: the resource JSON is the content; unicode61 folds case and diacritics;
      // 2- and 3-character prefix indexes keep short prefix queries from merging thousands of terms
      `CREATE VIRTUAL TABLE ${nameTable(type)}${suffix} USING fts5(${columns.join(', ')}, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3');`,
  )
  return `
    CREATE TABLE dir_resource${suffix} (
      rid INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      id TEXT NOT NULL,
      json TEXT NOT NULL
    );
    CREATE UNIQUE INDEX dir_resource_key__r${release} ON dir_resource${suffix} (type, id);
    CREATE TABLE dir_token${suffix} (param INTEGER NOT NULL, code TEXT NOT NULL, system TEXT NOT NULL, rid INTEGER NOT NULL);
    CREATE TABLE dir_ref${suffix} (param INTEGER NOT NULL, target TEXT NOT NULL, rid INTEGER NOT NULL);
    ${names.join('\n    ')}
  `
}

/** Built after the bulk load: one sorted build is far cheaper than maintaining them row by row. */
export function releaseIndexesSql(suffix: string, release: number): string {
  return `
    CREATE INDEX dir_token_lookup__r${release} ON dir_token${suffix} (param, code, rid);
    CREATE INDEX dir_ref_lookup__r${release} ON dir_ref${suffix} (param, target, rid);
  `
}

export const DIRECTORY_MIGRATIONS: Migration[] = [
  {
    version: 20,
    name: 'directory',
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
      ${releaseTablesSql('', 0)}
      ${releaseIndexesSql('', 0)}
    `,
  },
]
