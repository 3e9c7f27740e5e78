import type { Migration } from '../db/migrate.js'

export const ACCOUNTS_STEPS: Migration[] = [
  {
    legacyVersion: 1,
    name: 'organizations-and-keys',
    sql: `
      CREATE TABLE plans (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        monthly_limit INTEGER NOT NULL,
        minute_limit INTEGER NOT NULL,
        -- 1: past the monthly allowance requests are refused until the next month; 0: they continue
        blocks_past_month INTEGER NOT NULL
      );
      INSERT INTO plans VALUES
        ('developer', 'Developer', 1000, 60, 1),
        ('team', 'Team', 50000, 600, 0),
        ('scale', 'Scale', 500000, 3000, 0);

      CREATE TABLE organizations (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        plan_id TEXT NOT NULL DEFAULT 'developer' REFERENCES plans(id),
        created_at TEXT NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        org_id INTEGER NOT NULL REFERENCES organizations(id),
        name TEXT,
        display_prefix TEXT NOT NULL,
        secret_sha256 BLOB NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_org ON api_keys(org_id);

      -- period: 'm:<unix minute>' or 'M:<YYYY-MM>' (case matters: compare with GLOB, not LIKE)
      CREATE TABLE usage_counters (
        org_id INTEGER NOT NULL,
        period TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (org_id, period)
      ) WITHOUT ROWID;

      CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    `,
  },
  {
    legacyVersion: 30,
    name: 'usage-to-live',
    attachLive: true,
    // Moves what each request writes into the live database (src/db/live.ts). In WAL mode a commit spanning
    // two files is atomic per file only: a step cut between them runs again on the next open, so the copy
    // takes the larger value instead of adding, and running it twice changes nothing.
    sql: `
      INSERT INTO live.usage_counters (org_id, period, count)
        SELECT org_id, period, count FROM main.usage_counters WHERE true
        ON CONFLICT (org_id, period) DO UPDATE SET count = max(count, excluded.count);
      INSERT INTO live.key_last_used (key_id, last_used_at)
        SELECT id, last_used_at FROM main.api_keys WHERE last_used_at IS NOT NULL
        ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at);
      DROP TABLE main.usage_counters;
      ALTER TABLE main.api_keys DROP COLUMN last_used_at;
    `,
  },
  {
    name: 'operators',
    // The people who may sign in to the dashboard (src/dashboard); created with `svc operators create`.
    sql: `
      CREATE TABLE operators (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,  -- scrypt$<N>$<r>$<p>$<salt>$<hash> (src/accounts/passwords.ts)
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    name: 'key-owner-version',
    // A server remembers each key's owner (organization, plan, limits) and forgot them all at every commit to
    // the file, a sync's included. This version moves with every write to the tables an owner is read from, by
    // trigger so that no writer can forget it, and a server forgets owners only when it moved (keys.ts).
    sql: `
      CREATE TABLE key_owner_version (version INTEGER NOT NULL);
      INSERT INTO key_owner_version VALUES (0);
      ${['api_keys', 'organizations', 'plans']
        .flatMap((table) =>
          ['INSERT', 'UPDATE', 'DELETE'].map(
            (event) =>
              `CREATE TRIGGER ${table}_${event.toLowerCase()}_moves_key_owners AFTER ${event} ON ${table}
               BEGIN UPDATE key_owner_version SET version = version + 1; END;`,
          ),
        )
        .join('\n')}
    `,
  },
]

/** The live database's accounts tables. */
export const ACCOUNTS_LIVE_STEPS: Migration[] = [
  {
    legacyVersion: 1,
    name: 'usage-and-key-use',
    sql: `
      -- period: 'm:<unix minute>' or 'M:<YYYY-MM>' (case matters: compare with GLOB, not LIKE);
      -- count: requests counted (answered and not refunded) in that period
      CREATE TABLE usage_counters (
        org_id INTEGER NOT NULL,
        period TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (org_id, period)
      ) WITHOUT ROWID;

      -- When each key last authenticated a request (api_keys itself is in the main database).
      CREATE TABLE key_last_used (
        key_id TEXT PRIMARY KEY,
        last_used_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    legacyVersion: 2,
    name: 'usage-leases',
    sql: `
      -- Units of a period's allowance leased to one server process (holder) and not yet settled: neither
      -- counted in usage_counters nor returned. A period's allowance in use is its count plus these.
      CREATE TABLE usage_leases (
        org_id INTEGER NOT NULL,
        period TEXT NOT NULL,
        holder TEXT NOT NULL,
        units INTEGER NOT NULL,
        PRIMARY KEY (org_id, period, holder)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'operator-sessions',
    sql: `
      -- A signed-in dashboard session: the cookie's token is known only to the browser; this row holds its
      -- SHA-256. flash: a one-time message sealed with a key derived from that token (src/accounts/sessions.ts).
      CREATE TABLE operator_sessions (
        token_sha256 TEXT PRIMARY KEY,
        operator_id INTEGER NOT NULL,
        csrf TEXT NOT NULL,
        created_at INTEGER NOT NULL,  -- ms since epoch
        seen_at INTEGER NOT NULL,
        flash BLOB
      ) WITHOUT ROWID;
      CREATE INDEX operator_sessions_operator ON operator_sessions(operator_id);

      -- Failed sign-ins, by account (account:<email>) and by client address (address:<ip>), for throttling.
      CREATE TABLE signin_failures (
        scope TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE INDEX signin_failures_scope ON signin_failures(scope, at);
    `,
  },
]
