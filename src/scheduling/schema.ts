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
  {
    version: 4,
    name: 'scheduling-slots',
    // Read tables shaped for slot search. A group is a provider at a location (the spec's provider location
    // and actor card); a series is the part of a group whose slots share every searchable attribute but
    // status and time, so that all filters but those select series, and slots are read by index range.
    sql: `
      ALTER TABLE publishers ADD COLUMN last_fetch_at INTEGER;
      ALTER TABLE publishers ADD COLUMN manifest_etag TEXT;
      ALTER TABLE publishers ADD COLUMN manifest_last_modified TEXT;
      ALTER TABLE publishers ADD COLUMN manifest_sha256 TEXT;
      ALTER TABLE publishers ADD COLUMN transaction_time TEXT;
      ALTER TABLE publishers ADD COLUMN synced_at TEXT;
      ALTER TABLE publishers ADD COLUMN slot_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE publishers ADD COLUMN last_sync TEXT; -- JSON: {at, outcome, message, read, written, skipped, ms}

      CREATE TABLE sched_groups (
        id INTEGER PRIMARY KEY,
        publisher TEXT NOT NULL,
        key TEXT NOT NULL UNIQUE,
        location TEXT NOT NULL,       -- JSON location summary
        provider TEXT,                -- JSON provider summary; a location may have no provider
        is_virtual INTEGER NOT NULL
      );
      CREATE INDEX sched_groups_publisher ON sched_groups(publisher);

      CREATE TABLE sched_group_npis (
        npi TEXT NOT NULL,
        group_id INTEGER NOT NULL,
        PRIMARY KEY (npi, group_id)
      ) WITHOUT ROWID;
      CREATE INDEX sched_group_npis_group ON sched_group_npis(group_id);

      -- The group's searchable attributes are copied onto its series so that one index walk on one table
      -- finds the series of a search.
      CREATE TABLE sched_series (
        id INTEGER PRIMARY KEY,
        group_id INTEGER NOT NULL,
        publisher TEXT NOT NULL,
        city TEXT COLLATE NOCASE,
        state TEXT COLLATE NOCASE,
        is_virtual INTEGER NOT NULL,
        schedule_id TEXT NOT NULL,
        service_types TEXT NOT NULL,  -- JSON [{system, code, display}]
        specialties TEXT NOT NULL,    -- JSON [{system, code, display}]: the provider's and the schedule's
        appointment_type TEXT,
        accepting TEXT,               -- patient-type code, NULL when the feed declares none
        group_key TEXT NOT NULL,
        -- Slots per status (free, busy, busy-unavailable, busy-tentative): a default search (from now on)
        -- counts by subtracting the few past slots from these, and picks its plan by their size.
        free_count INTEGER NOT NULL DEFAULT 0,
        busy_count INTEGER NOT NULL DEFAULT 0,
        unavailable_count INTEGER NOT NULL DEFAULT 0,
        tentative_count INTEGER NOT NULL DEFAULT 0,
        online INTEGER NOT NULL DEFAULT 0,  -- some slot carries a booking link
        phone INTEGER NOT NULL DEFAULT 0    -- some slot carries a booking phone
      );
      CREATE INDEX sched_series_group ON sched_series(group_id);
      CREATE INDEX sched_series_publisher ON sched_series(publisher);
      CREATE INDEX sched_series_state ON sched_series(state, city);
      CREATE INDEX sched_series_city ON sched_series(city);

      -- kind 's' = service type, 'p' = specialty; token = system|code ('|code' without a system)
      CREATE TABLE sched_series_codes (
        kind TEXT NOT NULL,
        code TEXT NOT NULL,
        token TEXT NOT NULL,
        series_id INTEGER NOT NULL,
        PRIMARY KEY (kind, code, series_id)
      ) WITHOUT ROWID;
      CREATE INDEX sched_series_codes_token ON sched_series_codes(kind, token);
      CREATE INDEX sched_series_codes_series ON sched_series_codes(series_id);

      CREATE TABLE sched_slots (
        series_id INTEGER NOT NULL,
        status INTEGER NOT NULL,      -- index into free, busy, busy-unavailable, busy-tentative
        start_ms INTEGER NOT NULL,
        id TEXT NOT NULL,             -- <publisher>:<Slot id>
        end_ms INTEGER NOT NULL,
        booking_link TEXT,
        booking_phone TEXT,
        capacity INTEGER,
        PRIMARY KEY (series_id, status, start_ms, id)
      ) WITHOUT ROWID;
      CREATE INDEX sched_slots_by_start ON sched_slots(status, start_ms, id);
    `,
  },
]
