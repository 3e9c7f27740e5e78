import { randomBytes } from 'node:crypto'
import type { Db, Store } from '../db/open.js'
import { checkKeyShape, displayPrefix, generateSecret, hashSecret } from './keyFormat.js'
import { AccountError, requireOrganization } from './orgs.js'
import type { Plan } from './plans.js'

export interface ApiKeyRecord {
  id: string
  org: string
  name: string | null
  prefix: string
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export interface CreatedKey {
  id: string
  /** The secret: returned once, never stored. */
  key: string
  org: string
  name: string | null
  createdAt: string
}

/** What a request learns from its key: who it is and what its plan allows. */
export interface KeyOwner {
  keyId: string
  orgId: number
  orgSlug: string
  plan: Plan
}

export function createKey(
  db: Db,
  input: { org: string; name?: string },
  now: number = Date.now(),
): CreatedKey {
  const org = requireOrganization(db, input.org)
  const key = generateSecret()
  const id = `key_${randomBytes(8).toString('hex')}`
  const createdAt = new Date(now).toISOString()
  db.prepare(
    `INSERT INTO api_keys (id, org_id, name, display_prefix, secret_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(id, org.id, input.name ?? null, displayPrefix(key), hashSecret(key), createdAt)
  return { id, key, org: org.slug, name: input.name ?? null, createdAt }
}

/** Keys from the main database with their last use from the live one (src/db/live.ts). */
export function listKeys(store: Pick<Store, 'db' | 'live'>, org?: string): ApiKeyRecord[] {
  const orgFilter = org === undefined ? '' : 'WHERE o.id = ?'
  const statement = store.db.prepare(
    `SELECT k.id, o.slug AS org, k.name, k.display_prefix AS prefix, k.created_at AS createdAt,
            NULL AS lastUsedAt, k.revoked_at AS revokedAt
       FROM api_keys k JOIN organizations o ON o.id = k.org_id ${orgFilter}
      ORDER BY k.created_at, k.id`,
  )
  const rows = (
    org === undefined ? statement.all() : statement.all(requireOrganization(store.db, org).id)
  ) as ApiKeyRecord[]
  const lastUsed = new Map(
    store.live.prepare('SELECT key_id, last_used_at FROM key_last_used').raw().all() as [string, string][],
  )
  for (const row of rows) row.lastUsedAt = lastUsed.get(row.id) ?? null
  return rows
}

/** The organization a key belongs to (revoked or not), by the key's id. */
export function keyOrgId(db: Db, keyId: string): number | undefined {
  return db.statement('SELECT org_id FROM api_keys WHERE id = ?').pluck().get(keyId) as number | undefined
}

export function revokeKey(
  store: Pick<Store, 'db' | 'live'>,
  id: string,
  now: number = Date.now(),
): ApiKeyRecord {
  const result = store.db
    .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
    .run(new Date(now).toISOString(), id)
  const record = listKeys(store).find((key) => key.id === id)
  if (!record) throw new AccountError(`No key "${id}"; see \`svc keys list\``)
  if (result.changes === 0) throw new AccountError(`Key "${id}" was already revoked at ${record.revokedAt}`)
  return record
}

/** Keys remembered per process; past this the memory is cleared rather than grown. */
const REMEMBERED_KEYS = 10_000

/**
 * Returns a lookup bound to one connection; statements are prepared once. Owners are remembered in memory
 * (by the secret: it is in memory for the request anyway and never leaves the process) and forgotten as soon
 * as a key, organization or plan changes in the main database (`Db.changeGeneration`, then the owners'
 * version): a revocation by `svc keys revoke` in another process or a plan change refuses every request read
 * from the network in a later event-loop turn than its commit.
 * Requests read in the same turn were already on the wire when it committed. A key that is not well-formed
 * (keyFormat.ts) is not found, without touching the store; a remembered one was, so it is not checked again.
 */
export function keyOwnerLookup(db: Db): (key: string) => KeyOwner | undefined {
  const statement = db.prepare(
    `SELECT k.id AS keyId, o.id AS orgId, o.slug AS orgSlug, p.id AS planId, p.name AS planName,
            p.monthly_limit AS monthlyLimit, p.minute_limit AS minuteLimit, p.blocks_past_month AS blocksPastMonth
       FROM api_keys k JOIN organizations o ON o.id = k.org_id JOIN plans p ON p.id = o.plan_id
      WHERE k.secret_sha256 = ? AND k.revoked_at IS NULL`,
  )
  const ownersVersion = db.prepare('SELECT version FROM key_owner_version').pluck()
  const remembered = new Map<string, KeyOwner>()
  let seenGeneration = -1
  let seenVersion = -1
  return (key) => {
    // Its shape first, so that a mistyped key touches no file; a key remembered was well-formed.
    if (!remembered.has(key) && checkKeyShape(key) !== 'well-formed') return undefined
    const generation = db.changeGeneration()
    if (generation !== seenGeneration) {
      seenGeneration = generation
      // Only a change to keys, organizations or plans moves it (schema step key-owner-version).
      const version = ownersVersion.get() as number
      if (version !== seenVersion) remembered.clear()
      seenVersion = version
    }
    if (remembered.size >= REMEMBERED_KEYS) remembered.clear()
    const known = remembered.get(key)
    if (known) return known
    const row = statement.get(hashSecret(key)) as
      | (Omit<KeyOwner, 'plan'> & {
          planId: string
          planName: string
          monthlyLimit: number
          minuteLimit: number
          blocksPastMonth: number
        })
      | undefined
    if (!row) return undefined
    const owner: KeyOwner = {
      keyId: row.keyId,
      orgId: row.orgId,
      orgSlug: row.orgSlug,
      plan: {
        id: row.planId,
        name: row.planName,
        monthlyLimit: row.monthlyLimit,
        minuteLimit: row.minuteLimit,
        blocksPastMonth: row.blocksPastMonth === 1,
      },
    }
    remembered.set(key, owner)
    return owner
  }
}
