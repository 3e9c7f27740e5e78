import type { Db } from '../db/open.js'
import type { PropertyDeclaration, PropertyValue } from './model.js'

/**
 * For the answer cache: an answer read from the code systems held now stays true while the same releases
 * are held. A release's id names its content for good (ids are never reused, and a release is never changed
 * in place: write.ts deletes and inserts), so their count and highest id say whether the set moved; a sync
 * or an import of another domain leaves such answers kept.
 */
export function releasesUnchanged(db: Db): () => boolean {
  const held = () =>
    db
      .statement("SELECT count(*) || ':' || coalesce(max(id), 0) FROM term_code_systems")
      .pluck()
      .get() as string
  const now = held()
  return () => held() === now
}

export interface CodeSystemRow {
  id: number
  url: string
  version: string
  name: string | null
  title: string | null
  status: string
  content: string
  properties: PropertyDeclaration[]
}

export interface ConceptRow {
  code: string
  display: string | null
  definition: string | null
  status: string
  abstract: boolean
  designations: unknown[] | null
}

export interface ValueSetRow {
  url: string
  version: string
  name: string | null
  title: string | null
  status: string
  compose: Compose | null
}

export interface ComposeFilter {
  property: string
  op: string
  value: string
}

export interface ComposeItem {
  system?: string
  version?: string
  concept?: { code: string; display?: string }[]
  filter?: ComposeFilter[]
  valueSet?: string[]
}

export interface Compose {
  include: ComposeItem[]
  exclude?: ComposeItem[]
}

type RawSystem = Omit<CodeSystemRow, 'properties'> & { properties: string }

/** Parsed property declarations, by their JSON text (lookups read them on every call; few shapes recur). */
const declarations = new Map<string, PropertyDeclaration[]>()

function toSystem(row: RawSystem | undefined): CodeSystemRow | undefined {
  if (!row) return undefined
  let properties = declarations.get(row.properties)
  if (!properties) {
    properties = JSON.parse(row.properties) as PropertyDeclaration[]
    if (declarations.size > 4096) declarations.clear()
    declarations.set(row.properties, properties)
  }
  return { ...row, properties }
}

const SYSTEM_COLUMNS = 'id, url, version, name, title, status, content, properties'

/** A code system release: the one named, or without a version the one loaded last. */
export function findCodeSystem(db: Db, url: string, version?: string): CodeSystemRow | undefined {
  if (version !== undefined) {
    return toSystem(
      db
        .statement(`SELECT ${SYSTEM_COLUMNS} FROM term_code_systems WHERE url = ? AND version = ?`)
        .get(url, version) as RawSystem | undefined,
    )
  }
  return toSystem(
    db
      .statement(
        `SELECT ${SYSTEM_COLUMNS} FROM term_code_systems WHERE url = ? ORDER BY loaded_at DESC, id DESC LIMIT 1`,
      )
      .get(url) as RawSystem | undefined,
  )
}

export function codeSystemVersions(db: Db, url: string): string[] {
  return db
    .statement('SELECT version FROM term_code_systems WHERE url = ? ORDER BY version')
    .pluck()
    .all(url) as string[]
}

export interface ServedSystem {
  url: string
  title: string | null
  versions: string[]
  /** The release answered when a request names none: the one loaded last. */
  defaultVersion: string
}

/** Every code system held, with its releases; for TerminologyCapabilities. */
export function listCodeSystems(db: Db): ServedSystem[] {
  const rows = db
    .statement(
      'SELECT url, coalesce(title, name) AS title, version FROM term_code_systems ORDER BY url, loaded_at, id',
    )
    .all() as { url: string; title: string | null; version: string }[]
  const systems = new Map<string, ServedSystem>()
  for (const row of rows) {
    const known = systems.get(row.url)
    if (known) {
      known.versions.push(row.version)
      known.defaultVersion = row.version
    } else {
      systems.set(row.url, {
        url: row.url,
        title: row.title,
        versions: [row.version],
        defaultVersion: row.version,
      })
    }
  }
  return [...systems.values()]
}

type RawConcept = Omit<ConceptRow, 'abstract' | 'designations'> & {
  abstract: number
  designations: string | null
}

const toConcept = (row: RawConcept): ConceptRow => ({
  ...row,
  abstract: row.abstract === 1,
  designations: row.designations === null ? null : (JSON.parse(row.designations) as unknown[]),
})

const CONCEPT_COLUMNS = 'code, display, definition, status, abstract, designations'

export function findConcept(db: Db, systemId: number, code: string): ConceptRow | undefined {
  const row = db
    .statement(`SELECT ${CONCEPT_COLUMNS} FROM term_concepts WHERE system_id = ? AND code = ?`)
    .get(systemId, code) as RawConcept | undefined
  return row && toConcept(row)
}

/** Every concept of a system in its own order. */
export function allConcepts(db: Db, systemId: number): ConceptRow[] {
  return (
    db
      .statement(`SELECT ${CONCEPT_COLUMNS} FROM term_concepts WHERE system_id = ? ORDER BY seq`)
      .all(systemId) as RawConcept[]
  ).map(toConcept)
}

export function conceptProperties(db: Db, systemId: number, code: string): PropertyValue[] {
  return (
    db
      .statement('SELECT property, type, value FROM term_concept_properties WHERE system_id = ? AND code = ?')
      .all(systemId, code) as { property: string; type: string; value: string }[]
  ).map((row) => ({ property: row.property, type: row.type, value: JSON.parse(row.value) as unknown }))
}

export function parentsOf(db: Db, systemId: number, code: string): string[] {
  return db
    .statement('SELECT parent FROM term_hierarchy WHERE system_id = ? AND child = ? ORDER BY parent')
    .pluck()
    .all(systemId, code) as string[]
}

export function childrenOf(db: Db, systemId: number, code: string): string[] {
  return db
    .statement(
      `SELECT h.child FROM term_hierarchy h JOIN term_concepts c ON c.system_id = h.system_id AND c.code = h.child
     WHERE h.system_id = ? AND h.parent = ? ORDER BY c.seq`,
    )
    .pluck()
    .all(systemId, code) as string[]
}

/** The code and every code below it in the hierarchy. */
export function descendantsOrSelf(db: Db, systemId: number, code: string): Set<string> {
  const codes = db
    .statement(
      `WITH RECURSIVE below(code) AS (
       SELECT ? UNION SELECT h.child FROM term_hierarchy h JOIN below b ON h.parent = b.code WHERE h.system_id = ?
     ) SELECT code FROM below`,
    )
    .pluck()
    .all(code, systemId) as string[]
  return new Set(codes)
}

/** Codes whose property equals a value (as its JSON text). */
export function codesWithProperty(db: Db, systemId: number, property: string, value: unknown): Set<string> {
  return new Set(
    db
      .statement(
        'SELECT code FROM term_concept_properties WHERE system_id = ? AND property = ? AND value = ?',
      )
      .pluck()
      .all(systemId, property, JSON.stringify(value)) as string[],
  )
}

/** Codes that have any value of a property. */
export function codesHavingProperty(db: Db, systemId: number, property: string): Set<string> {
  return new Set(
    db
      .statement('SELECT code FROM term_concept_properties WHERE system_id = ? AND property = ?')
      .pluck()
      .all(systemId, property) as string[],
  )
}

/** Concepts of a system whose property equals a value, sorted by display; $counties reads these. */
export function conceptsWithPropertyByDisplay(
  db: Db,
  systemId: number,
  property: string,
  value: unknown,
): ConceptRow[] {
  return (
    db
      .statement(
        `SELECT c.code, c.display, c.definition, c.status, c.abstract, c.designations
       FROM term_concept_properties p JOIN term_concepts c ON c.system_id = p.system_id AND c.code = p.code
       WHERE p.system_id = ? AND p.property = ? AND p.value = ?
       ORDER BY c.display COLLATE NOCASE, c.code`,
      )
      .all(systemId, property, JSON.stringify(value)) as RawConcept[]
  ).map(toConcept)
}

type RawValueSet = Omit<ValueSetRow, 'compose'> & { compose: string | null }

export function findValueSet(db: Db, url: string, version?: string): ValueSetRow | undefined {
  const row = (
    version !== undefined
      ? db
          .statement(
            'SELECT url, version, name, title, status, compose FROM term_value_sets WHERE url = ? AND version = ?',
          )
          .get(url, version)
      : db
          .statement(
            `SELECT url, version, name, title, status, compose FROM term_value_sets WHERE url = ?
           ORDER BY loaded_at DESC, id DESC LIMIT 1`,
          )
          .get(url)
  ) as RawValueSet | undefined
  return row && { ...row, compose: row.compose === null ? null : (JSON.parse(row.compose) as Compose) }
}
