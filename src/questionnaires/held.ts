import { createHash } from 'node:crypto'
import type Database from 'better-sqlite3'
import { ID_PATTERN } from '../fhir/id.js'
import { QUESTIONNAIRE_LAYOUT } from './layout.js'

type Resource = Record<string, unknown>

/** Where a held Questionnaire came from: the bundled set, an import (of a file or an address), a configured source. */
export type Origin = 'curated' | 'file' | 'address' | 'fetched'

export interface HeldQuestionnaire {
  /** The bytes as published: served unchanged unless the id had to be set (below). */
  bytes: Buffer
  resource: Resource
  origin: Origin
  /** The file name, address or source it came from (a file by its own name, never the operator's path). */
  source: string
  /** Validators a configured source sent it with, for conditional revalidation. */
  etag?: string
  lastModified?: string
}

export interface PutResult {
  id: string
  /** The same identity (`url|version`, or the id of one without `url`) was held and is replaced. */
  replaced: boolean
}

const STATUS_RANK: Record<string, number> = { active: 0, draft: 1, retired: 2, unknown: 3 }

const text = (value: unknown) => (typeof value === 'string' ? value : undefined)

const hashOf = (value: string | Buffer) => createHash('sha256').update(value).digest('hex')

const index = QUESTIONNAIRE_LAYOUT.indexes.get('Questionnaire')
if (!index) throw new Error('the Questionnaire store declares no Questionnaire type')
const INDEX = index

/** The resource with `id` set, right after `resourceType`, every other member as published and in order. */
function withId(resource: Resource, id: string): Buffer {
  const { resourceType, id: _, ...rest } = resource
  return Buffer.from(JSON.stringify({ resourceType, id, ...rest }))
}

/**
 * The held Questionnaires, in the main file: identity is `url` + `version` (or, for one with no `url`, its
 * id), and a resource is held as published. Two ids are set by the service, never other members: one
 * published without `id` gets `q-` and the first 16 hex digits of the SHA-256 of `url|version` (of its bytes
 * when it has no `url`); one whose `id` another held Questionnaire already has gets that id, a dash and the
 * first 8 hex digits of the same hash.
 */
export class HeldQuestionnaires {
  readonly #statements = new Map<string, Database.Statement>()

  constructor(private readonly db: Database.Database) {}

  /** Prepared once per instance: an import holds thousands, and preparing costs more than running. */
  #sql(text: string): Database.Statement {
    let statement = this.#statements.get(text)
    if (!statement) {
      statement = this.db.prepare(text)
      this.#statements.set(text, statement)
    }
    return statement
  }

  /** Holds one Questionnaire (in the caller's transaction), replacing what had its identity. */
  put(held: HeldQuestionnaire, now: string): PutResult {
    const { resource } = held
    const url = text(resource.url)
    const version = text(resource.version)
    const published = text(resource.id)
    const previous = this.#sameIdentity(url, version, published)
    if (previous !== undefined) this.remove(previous)
    const identity = url === undefined ? held.bytes : `${url}|${version ?? ''}`
    let id = published !== undefined && ID_PATTERN.test(published) ? published : undefined
    if (id === undefined) id = `q-${hashOf(identity).slice(0, 16)}`
    else if (this.#ridOfId(id) !== undefined) id = `${id.slice(0, 55)}-${hashOf(identity).slice(0, 8)}`
    const bytes = id === published ? held.bytes : withId(resource, id)
    const { lastInsertRowid } = this.#sql(
      `INSERT INTO ${QUESTIONNAIRE_LAYOUT.resource} (type, id, json, source, line) VALUES ('Questionnaire', ?, ?, 0, 0)`,
    ).run(id, bytes)
    const rid = Number(lastInsertRowid)
    this.#index(rid, { ...resource, id })
    this.#sql(
      `INSERT INTO questionnaire_held (rid, url, version, status_rank, date, origin, source, held_at, etag, last_modified, checked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      rid,
      url ?? null,
      version ?? null,
      STATUS_RANK[text(resource.status) ?? 'unknown'] ?? 3,
      text(resource.date) ?? null,
      held.origin,
      held.source,
      now,
      held.etag ?? null,
      held.lastModified ?? null,
      held.origin === 'fetched' ? now : null,
    )
    return { id, replaced: previous !== undefined }
  }

  /** Whether a Questionnaire of this identity is held. */
  holds(resource: Resource): boolean {
    return this.#sameIdentity(text(resource.url), text(resource.version), text(resource.id)) !== undefined
  }

  /** Removes one held Questionnaire and its index rows. */
  remove(rid: number): void {
    const { resource, token, ref, textTables } = QUESTIONNAIRE_LAYOUT
    this.#sql(`DELETE FROM ${resource} WHERE rid = ?`).run(rid)
    this.#sql(`DELETE FROM ${token} WHERE rid = ?`).run(rid)
    this.#sql(`DELETE FROM ${ref} WHERE rid = ?`).run(rid)
    for (const { table } of textTables.values()) this.#sql(`DELETE FROM ${table} WHERE rowid = ?`).run(rid)
    this.#sql('DELETE FROM questionnaire_held WHERE rid = ?').run(rid)
  }

  /** Marks a fetched copy as confirmed by its source (a 304). */
  confirmed(rid: number, now: string): void {
    this.#sql('UPDATE questionnaire_held SET checked_at = ? WHERE rid = ?').run(now, rid)
  }

  #sameIdentity(url: string | undefined, version: string | undefined, id: string | undefined) {
    if (url !== undefined)
      return this.#sql(`SELECT rid FROM questionnaire_held WHERE url = ? AND coalesce(version, '') = ?`)
        .pluck()
        .get(url, version ?? '') as number | undefined
    if (id === undefined) return undefined
    return this.#sql(
      `SELECT r.rid FROM ${QUESTIONNAIRE_LAYOUT.resource} r JOIN questionnaire_held h ON h.rid = r.rid
         WHERE r.type = 'Questionnaire' AND r.id = ? AND h.url IS NULL`,
    )
      .pluck()
      .get(id) as number | undefined
  }

  #ridOfId(id: string): number | undefined {
    return this.#sql(
      `SELECT rid FROM ${QUESTIONNAIRE_LAYOUT.resource} WHERE type = 'Questionnaire' AND id = ?`,
    )
      .pluck()
      .get(id) as number | undefined
  }

  #index(rid: number, resource: Resource): void {
    const rows = INDEX.derive(resource)
    const token = this.#sql(
      `INSERT INTO ${QUESTIONNAIRE_LAYOUT.token} (param, code, system, rid) VALUES (?, ?, ?, ?)`,
    )
    for (const [param, system, code] of rows.tokens) token.run(param, code, system, rid)
    const ref = this.#sql(`INSERT INTO ${QUESTIONNAIRE_LAYOUT.ref} (param, target, rid) VALUES (?, ?, ?)`)
    for (const [param, target] of rows.refs) ref.run(param, target, rid)
    INDEX.texts.forEach((text, position) => {
      const table = [...QUESTIONNAIRE_LAYOUT.textTables.values()].find(
        (candidate) => candidate.tokenizer === text.tokenizer,
      )
      const values = rows.texts?.[position]
      if (!table || !values) return
      this.#sql(
        `INSERT INTO ${table.table} (rowid, ${table.columns.join(', ')}) VALUES (?, ${table.columns.map(() => '?').join(', ')})`,
      ).run(rid, ...values)
    })
  }
}
