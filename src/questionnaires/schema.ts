import type { Migration } from '../db/migrate.js'
import { releaseIndexesSql, releaseKeySql, releaseTablesSql } from '../fhir/store/schema.js'
import { loadCurated } from './curated.js'
import { QUESTIONNAIRE_LAYOUT } from './layout.js'

export const QUESTIONNAIRE_STEPS: Migration[] = [
  {
    name: 'store',
    // The shared store's tables, in the main file (the reader serves them when no release file is active:
    // questionnaires_releases stays empty). questionnaire_held says where each came from and what orders
    // its versions: `origin` curated | file | address (imported) | fetched (from a configured source, with
    // the validators it was sent with); `status_rank` active 0, draft 1, retired 2, unknown 3.
    sql: `
      CREATE TABLE questionnaires_releases (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL,
        pid INTEGER,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        sources TEXT NOT NULL,
        summary TEXT,
        file TEXT
      );
      ${releaseTablesSql(QUESTIONNAIRE_LAYOUT)}
      ${releaseKeySql(QUESTIONNAIRE_LAYOUT)};
      ${releaseIndexesSql(QUESTIONNAIRE_LAYOUT)}
      CREATE TABLE questionnaire_held (
        rid INTEGER PRIMARY KEY,
        url TEXT,
        version TEXT,
        status_rank INTEGER NOT NULL,
        date TEXT,
        origin TEXT NOT NULL,
        source TEXT NOT NULL,
        held_at TEXT NOT NULL,
        etag TEXT,
        last_modified TEXT,
        checked_at TEXT
      );
      CREATE UNIQUE INDEX questionnaire_held_canonical ON questionnaire_held (url, coalesce(version, ''))
        WHERE url IS NOT NULL;
    `,
  },
  {
    name: 'curated',
    sql: '',
    apply: (db) => {
      loadCurated(db)
    },
  },
]
