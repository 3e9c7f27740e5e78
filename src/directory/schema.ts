import type { Migration } from '../db/migrate.js'

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
