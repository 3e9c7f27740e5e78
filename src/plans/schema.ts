import type { Migration } from '../db/migrate.js'

export const PLANS_STEPS: Migration[] = [
  {
    name: 'releases',
    // plans_releases: the shared store's release bookkeeping (src/fhir/store/releases.ts). A release holds
    // every partition served; plans_partitions says which, each a program's plans of one plan year, under the
    // release name its plans carry in meta.source.
    sql: `
      CREATE TABLE plans_releases (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL,
        pid INTEGER,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        sources TEXT NOT NULL,
        summary TEXT,
        file TEXT
      );
      CREATE TABLE plans_partitions (
        release INTEGER NOT NULL,
        program TEXT NOT NULL,
        year INTEGER NOT NULL,
        name TEXT NOT NULL,
        files TEXT NOT NULL,
        plans INTEGER NOT NULL,
        imported_at TEXT NOT NULL,
        PRIMARY KEY (release, program, year)
      );
    `,
  },
]
