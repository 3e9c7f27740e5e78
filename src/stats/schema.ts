import type { Migration } from '../db/migrate.js'

export const STATS_STEPS: Migration[] = [
  {
    legacyVersion: 2,
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
    legacyVersion: 31,
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

/** The live database's stats tables. */
export const STATS_LIVE_STEPS: Migration[] = [
  {
    legacyVersion: 10,
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
  {
    name: 'request-log-group',
    // The endpoint's group, written by the server, so that `svc top` reads it instead of resolving routes.
    sql: `ALTER TABLE request_log ADD COLUMN grp TEXT;`,
  },
  {
    name: 'request-tallies',
    // Requests refused before a key or a route was found are counted here per minute, not stored row by row.
    sql: `CREATE TABLE request_tallies (
      minute INTEGER NOT NULL,      -- minutes since the epoch
      status INTEGER NOT NULL,
      path_class TEXT NOT NULL,     -- fhir, api (the rest of /v1) or open
      count INTEGER NOT NULL,
      PRIMARY KEY (minute, status, path_class)
    ) WITHOUT ROWID;`,
  },
  {
    name: 'server-processes',
    // Each serving process (each worker of svc serve) says how it is doing, once a flush of its request log:
    // svc top shows the processes seen lately. A process that closes removes its row.
    sql: `CREATE TABLE server_processes (
      pid INTEGER PRIMARY KEY,
      started_at INTEGER NOT NULL,  -- ms since epoch
      seen_at INTEGER NOT NULL,     -- ms since epoch: a row not seen again for a while is of a process gone
      loop_p99_ms REAL NOT NULL,    -- event-loop delay over its last 10 to 20 s (src/stats/eventLoop.ts)
      loop_max_ms REAL NOT NULL
    );`,
  },
  {
    name: 'request-hours',
    // Requests logged a clock hour, per organization (0: none), with the 429s and 5xxs among them: the
    // dashboard's charts read these instead of counting request_log rows. Filled by the request log's writer.
    sql: `CREATE TABLE request_hours (
      hour INTEGER NOT NULL,        -- hours since the epoch
      org_id INTEGER NOT NULL,
      requests INTEGER NOT NULL,
      limited INTEGER NOT NULL,     -- 429
      failed INTEGER NOT NULL,      -- 5xx
      PRIMARY KEY (hour, org_id)
    ) WITHOUT ROWID;
    INSERT INTO request_hours (hour, org_id, requests, limited, failed)
      SELECT at / 3600000, coalesce(org_id, 0), count(*), sum(status = 429), sum(status >= 500)
        FROM request_log GROUP BY 1, 2;`,
  },
  {
    name: 'request-log-org',
    // The dashboard lists an organization's requests newest first: without this it walks every request.
    sql: `CREATE INDEX request_log_org ON request_log(org_id, at);`,
  },
  {
    name: 'server-minute',
    // Each serving process's last minute (requests, 5xx, latency bins as JSON [[bin, count], ...]), written
    // with its report: the dashboard's live figures sum these rows instead of reading the request log.
    sql: `
      ALTER TABLE server_processes ADD COLUMN minute_requests INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE server_processes ADD COLUMN minute_failed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE server_processes ADD COLUMN minute_latency TEXT NOT NULL DEFAULT '[]';
    `,
  },
]
