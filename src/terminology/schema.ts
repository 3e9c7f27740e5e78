import type { Migration } from '../db/migrate.js'

export const TERMINOLOGY_STEPS: Migration[] = [
  {
    legacyVersion: 10,
    name: 'code-systems',
    sql: `
      -- One row per code system release; several releases of one system may be held side by side.
      -- AUTOINCREMENT: an id is never reused, so a release's id names its content for good and
      -- in-process caches keyed by it never go stale when a release is replaced.
      CREATE TABLE term_code_systems (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        url TEXT NOT NULL,
        version TEXT NOT NULL,           -- the named release
        name TEXT,
        title TEXT,
        status TEXT NOT NULL,
        content TEXT NOT NULL,           -- complete | fragment | example
        properties TEXT NOT NULL,        -- JSON: CodeSystem.property declarations
        origin TEXT NOT NULL,            -- bundled package or imported file, for operators
        concept_count INTEGER NOT NULL,
        loaded_at INTEGER NOT NULL,
        UNIQUE (url, version)
      );

      CREATE TABLE term_concepts (
        system_id INTEGER NOT NULL REFERENCES term_code_systems(id) ON DELETE CASCADE,
        code TEXT NOT NULL,
        seq INTEGER NOT NULL,            -- order in the code system, kept in expansions
        display TEXT,
        definition TEXT,
        status TEXT NOT NULL,            -- active | inactive | deprecated | retired
        abstract INTEGER NOT NULL,       -- notSelectable
        designations TEXT,               -- JSON: CodeSystem.concept.designation
        PRIMARY KEY (system_id, code)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX term_concepts_seq ON term_concepts(system_id, seq);

      -- Concept properties, one row per value, so expansions can filter on them ("=", $counties' state).
      CREATE TABLE term_concept_properties (
        system_id INTEGER NOT NULL REFERENCES term_code_systems(id) ON DELETE CASCADE,
        code TEXT NOT NULL,
        property TEXT NOT NULL,
        type TEXT NOT NULL,              -- the value[x] suffix: Code, String, Boolean, Integer, Coding, ...
        value TEXT NOT NULL              -- JSON of the value
      );
      CREATE INDEX term_concept_properties_code ON term_concept_properties(system_id, code);
      CREATE INDEX term_concept_properties_value ON term_concept_properties(system_id, property, value);

      -- The subsumption hierarchy (parent is-a), from nested concepts and parent/child properties.
      CREATE TABLE term_hierarchy (
        system_id INTEGER NOT NULL REFERENCES term_code_systems(id) ON DELETE CASCADE,
        parent TEXT NOT NULL,
        child TEXT NOT NULL,
        PRIMARY KEY (system_id, parent, child)
      ) WITHOUT ROWID;
      CREATE INDEX term_hierarchy_child ON term_hierarchy(system_id, child);

      CREATE TABLE term_value_sets (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        version TEXT NOT NULL,
        name TEXT,
        title TEXT,
        status TEXT NOT NULL,
        compose TEXT,                    -- JSON: ValueSet.compose
        origin TEXT NOT NULL,
        loaded_at INTEGER NOT NULL,
        UNIQUE (url, version)
      );

      -- Reference data sets loaded from packages on first start, and the release each was loaded at.
      CREATE TABLE term_bundles (
        name TEXT PRIMARY KEY,
        release TEXT NOT NULL,
        loaded_at INTEGER NOT NULL
      );
    `,
  },
]
