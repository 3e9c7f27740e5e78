import type { Db } from '../db/open.js'
import type { CodeSystemRelease, ValueSetRecord } from './model.js'

/**
 * Replaces one code system release (url + version) with `release`. Call inside a transaction: the
 * caller decides what one atomic unit is.
 */
export function writeCodeSystem(db: Db, release: CodeSystemRelease, now: number): void {
  db.prepare('DELETE FROM term_code_systems WHERE url = ? AND version = ?').run(release.url, release.version)
  const { lastInsertRowid } = db
    .prepare(
      `INSERT INTO term_code_systems
         (url, version, name, title, status, content, properties, origin, concept_count, loaded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      release.url,
      release.version,
      release.name ?? null,
      release.title ?? null,
      release.status,
      release.content,
      JSON.stringify(release.properties),
      release.origin,
      release.concepts.length,
      now,
    )
  const systemId = Number(lastInsertRowid)
  const concept = db.prepare(
    `INSERT INTO term_concepts (system_id, code, seq, display, definition, status, abstract, designations)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const property = db.prepare(
    'INSERT INTO term_concept_properties (system_id, code, property, type, value) VALUES (?, ?, ?, ?, ?)',
  )
  const link = db.prepare('INSERT OR IGNORE INTO term_hierarchy (system_id, parent, child) VALUES (?, ?, ?)')
  let seq = 0
  for (const c of release.concepts) {
    concept.run(
      systemId,
      c.code,
      seq,
      c.display ?? null,
      c.definition ?? null,
      c.status,
      c.abstract ? 1 : 0,
      c.designations && c.designations.length > 0 ? JSON.stringify(c.designations) : null,
    )
    for (const p of c.properties) property.run(systemId, c.code, p.property, p.type, JSON.stringify(p.value))
    for (const parent of c.parents) link.run(systemId, parent, c.code)
    seq++
  }
}

export function writeValueSet(db: Db, valueSet: ValueSetRecord, now: number): void {
  db.prepare(
    `INSERT INTO term_value_sets (url, version, name, title, status, compose, origin, loaded_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (url, version) DO UPDATE SET name = excluded.name, title = excluded.title,
       status = excluded.status, compose = excluded.compose, origin = excluded.origin,
       loaded_at = excluded.loaded_at`,
  ).run(
    valueSet.url,
    valueSet.version,
    valueSet.name ?? null,
    valueSet.title ?? null,
    valueSet.status,
    valueSet.compose === undefined ? null : JSON.stringify(valueSet.compose),
    valueSet.origin,
    now,
  )
}
