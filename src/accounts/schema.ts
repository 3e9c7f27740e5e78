import type { Migration } from '../db/migrate.js'

export const ACCOUNTS_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts',
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
]
