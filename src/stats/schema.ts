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
  {
    version: 31,
    name: 'request-log-to-live',
    attachLive: true,
    // Moved into the live database (src/db/live.ts). A repeat after a step cut between the two files'
    // commits ignores the rows already copied.
    sql: `
      INSERT OR IGNORE INTO live.request_log
          (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
        SELECT request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes
          FROM main.request_log;
      DROP TABLE main.request_log;
    `,
  },
]

/** The live database's stats tables (src/db/liveMigrations.ts numbers them: stats 10-19). */
export const STATS_LIVE_MIGRATIONS: Migration[] = [
  {
    version: 10,
    name: 'request-log',
    sql: `
      CREATE TABLE request_log (
        request_id TEXT PRIMARY KEY,
        at INTEGER NOT NULL,          -- ms since epoch
        org_id INTEGER,               -- organizations.id in the main database
        key_id TEXT,                  -- api_keys.id in the main database
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
