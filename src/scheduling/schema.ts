import type { Migration } from '../db/migrate.js'

/** The slots table's two access paths, named so that each query says which one it walks. */
export const SLOTS_BY_SERIES = 'sqlite_autoindex_sched_slots_1' // the primary key: (series_id, status, start_ms, id)
/** Each sync's slot keys in start order, (part, status, start_ms, id, series_id): written sorted at its end. */
export const SLOT_ORDER = 'sched_slot_order'

export const SCHEDULING_STEPS: Migration[] = [
  {
    legacyVersion: 3,
    name: 'publishers',
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
    legacyVersion: 4,
    name: 'slots',
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

      -- A series carries its group's searchable attributes, so that search can hold every series in memory
      -- (src/scheduling/seriesIndex.ts) and settle all filters but status and time without reading slots.
      CREATE TABLE sched_series (
        id INTEGER PRIMARY KEY,
        group_id INTEGER NOT NULL,
        group_key TEXT NOT NULL,
        publisher TEXT NOT NULL,
        city TEXT,
        state TEXT,
        is_virtual INTEGER NOT NULL,
        npis TEXT NOT NULL,           -- JSON ["1234567893"]: the provider's NPIs in any NPI system
        schedule_id TEXT NOT NULL,
        service_types TEXT NOT NULL,  -- JSON [{system, code, display}]
        specialties TEXT NOT NULL,    -- JSON [{system, code, display}]: the provider's and the schedule's
        appointment_type TEXT,
        accepting TEXT,               -- patient-type code, NULL when the feed declares none
        -- Per status (free, busy, busy-unavailable, busy-tentative): how many slots and the first start.
        -- A default search (from now on) counts by subtracting the few past slots from these.
        free_count INTEGER NOT NULL DEFAULT 0,
        busy_count INTEGER NOT NULL DEFAULT 0,
        unavailable_count INTEGER NOT NULL DEFAULT 0,
        tentative_count INTEGER NOT NULL DEFAULT 0,
        free_first INTEGER,
        busy_first INTEGER,
        unavailable_first INTEGER,
        tentative_first INTEGER,
        online INTEGER NOT NULL DEFAULT 0,  -- some slot carries a booking link
        phone INTEGER NOT NULL DEFAULT 0    -- some slot carries a booking phone
      );
      CREATE INDEX sched_series_group ON sched_series(group_id);
      CREATE INDEX sched_series_publisher ON sched_series(publisher);

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
  {
    legacyVersion: 5,
    name: 'slot-parts',
    // Shipped after files counted past its number: those run it when they lack its column.
    legacyMissing: "SELECT count(*) = 0 FROM pragma_table_info('publishers') WHERE name = 'slot_part'",
    // Slots in start order were one index over every publisher, so each sync's rows landed all over it and
    // its commit rewrote most of that index: syncs slowed with every publisher already stored. Each sync now
    // writes a part of its own (a number from one counter: the highest part + 1), the start-ordered index
    // leads with it, and a search across publishers merges their parts in start order (search.ts). Slots
    // already stored take their publisher's rowid as their part.
    sql: `
      ALTER TABLE publishers ADD COLUMN slot_part INTEGER; -- the last sync's part; NULL before the first
      UPDATE publishers SET slot_part = rowid WHERE synced_at IS NOT NULL;
      ALTER TABLE sched_slots ADD COLUMN part INTEGER NOT NULL DEFAULT 0;
      UPDATE sched_slots SET part = coalesce((
        SELECT p.slot_part FROM sched_series s JOIN publishers p ON p.slug = s.publisher
        WHERE s.id = sched_slots.series_id), 0);
      DROP INDEX sched_slots_by_start;
      CREATE INDEX sched_slots_by_part_start ON sched_slots(part, status, start_ms, id);
    `,
  },
  {
    legacyVersion: 33,
    name: 'part-counter',
    // Parts were numbered highest + 1, so a publisher removed while it held the highest part, added again and
    // synced took the old number back, and a server that had not searched in between went on serving the old
    // sync's series for it (seriesIndex.ts reloads a publisher when its part changes). A counter never goes back.
    sql: `
      CREATE TABLE sched_part_counter (last INTEGER NOT NULL);
      INSERT INTO sched_part_counter SELECT coalesce(max(slot_part), 0) FROM publishers;
    `,
  },
  {
    name: 'series-start-hours',
    // Each series' slots of each status as the hours they start in (sorted int32 in the platform's byte
    // order), written by the sync that wrote them: the first deep page after a sync read them from the slots
    // themselves, some 60 ms for a 400,000-slot publisher, on the event loop. A table of their own so that
    // scans of sched_series stay as small as they were. A series synced before this step has no row: its
    // part is read from the slots, as before, until the next sync.
    sql: `
      CREATE TABLE IF NOT EXISTS sched_series_hours (
        series_id INTEGER PRIMARY KEY,
        free BLOB,
        busy BLOB,
        unavailable BLOB,
        tentative BLOB
      );
    `,
  },
  {
    name: 'series-starts',
    // Each series' slot starts themselves in place of their hours (sorted float64 epoch ms in the platform's
    // byte order; src/scheduling/search/startTimes.ts): counts and next starts from any moment are then
    // exact without reading slots, as hours needed a read of the slots in the moment's own hour and of each
    // series' next. A series synced before has no row: its part is read from the slots until the next sync.
    sql: `
      DROP TABLE IF EXISTS sched_series_hours;
      CREATE TABLE IF NOT EXISTS sched_series_starts (
        series_id INTEGER PRIMARY KEY,
        free BLOB,
        busy BLOB,
        unavailable BLOB,
        tentative BLOB
      );
    `,
  },
  {
    name: 'slot-order',
    // The by-start index took each slot as it came, at a random place in its part: about 1 µs a slot of a
    // sync's writing went to that index alone. Its keys are now a table the sync writes once all its slots
    // are in, in key order from one sort (src/scheduling/sync/slotWriter.ts), which appends. Searches walk it
    // as they walked the index and read whole rows by primary key. Runs on files of numbered versions too.
    sql: `
      CREATE TABLE IF NOT EXISTS sched_slot_order (
        part INTEGER NOT NULL,
        status INTEGER NOT NULL,
        start_ms INTEGER NOT NULL,
        id TEXT NOT NULL,
        series_id INTEGER NOT NULL,
        PRIMARY KEY (part, status, start_ms, id, series_id)
      ) WITHOUT ROWID;
      DELETE FROM sched_slot_order;
      INSERT INTO sched_slot_order (part, status, start_ms, id, series_id)
        SELECT part, status, start_ms, id, series_id FROM sched_slots ORDER BY 1, 2, 3, 4, 5;
      DROP INDEX IF EXISTS sched_slots_by_part_start;
    `,
  },
]
