import type { Migration } from '../db/migrate.js'

export const SCHEDULING_MIGRATIONS: Migration[] = [
  {
    version: 3,
    name: 'scheduling-publishers',
    sql: `
      CREATE TABLE publishers (
        slug TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        manifest_url TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
      );
    `,
  },
]
