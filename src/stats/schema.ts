import type { Migration } from '../db/migrate.js'

export const STATS_MIGRATIONS: Migration[] = [
  {
    version: 2,
    name: 'request-log',
    sql: `
      CREATE TABLE request_log (
        request_id TEXT PRIMARY KEY,
        at INTEGER NOT NULL,          -- ms since epoch
        org_id INTEGER,
        key_id TEXT,
        method TEXT NOT NULL,
        path TEXT NOT NULL,           -- without query string: queries may carry personal data
        route TEXT,                   -- the declared endpoint path, for per-endpoint figures
        status INTEGER NOT NULL,
        duration_ms REAL NOT NULL,
        bytes INTEGER NOT NULL
      );
      CREATE INDEX request_log_at ON request_log(at);
    `,
  },
]
