import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createKey, keyOwnerLookup, revokeKey } from '../src/accounts/keys.js'
import { hashSecret } from '../src/accounts/keyFormat.js'
import { createOrganization, setOrganizationPlan } from '../src/accounts/orgs.js'
import type { Store } from '../src/db/open.js'
import { openStore } from '../src/app/store.js'
import { addPublisher } from '../src/scheduling/publishers.js'

let dir: string
let serving: Store
let admin: Store

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-keys-'))
  serving = openStore({ db: join(dir, 'svc.db') })
  // Another connection, as `svc keys revoke` in another process has.
  admin = openStore({ db: join(dir, 'svc.db') })
  createOrganization(admin.db, { slug: 'acme' })
})

afterEach(() => {
  serving.close()
  admin.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the key owner lookup', () => {
  it('sees a revocation committed elsewhere from the next event-loop turn', async () => {
    const created = createKey(admin.db, { org: 'acme' })
    const lookup = keyOwnerLookup(serving.db)
    expect(lookup(created.key)).toMatchObject({ keyId: created.id, orgSlug: 'acme' })
    revokeKey(admin, created.id)
    // Requests read in the turn the revocation committed in were already on the wire: they may pass.
    expect(lookup(created.key)).toBeDefined()
    await nextTurn()
    expect(lookup(created.key)).toBeUndefined()
  })

  it('sees a plan change made on its own connection from the next turn', async () => {
    const created = createKey(serving.db, { org: 'acme' })
    const lookup = keyOwnerLookup(serving.db)
    expect(lookup(created.key)?.plan.id).toBe('developer')
    setOrganizationPlan(serving.db, 'acme', 'scale')
    await nextTurn()
    expect(lookup(created.key)?.plan).toMatchObject({ id: 'scale', minuteLimit: 3000 })
  })

  it('finds a key created after an unknown one was asked for', async () => {
    const lookup = keyOwnerLookup(serving.db)
    const created = createKey(admin.db, { org: 'acme' })
    revokeKey(admin, created.id)
    expect(lookup(created.key)).toBeUndefined()
    const fresh = createKey(admin.db, { org: 'acme' })
    await nextTurn()
    expect(lookup(fresh.key)?.keyId).toBe(fresh.id)
  })

  it('keeps the owners it knows through commits that change no key, organization or plan', async () => {
    const created = createKey(admin.db, { org: 'acme' })
    const lookup = keyOwnerLookup(serving.db)
    const known = lookup(created.key)
    // A publisher's sync, elsewhere: the file changes, the owners do not.
    addPublisher(admin.db, { slug: 'clinic', manifestUrl: join(dir, 'clinic', '$bulk-publish') })
    await nextTurn()
    expect(lookup(created.key)).toBe(known)
    setOrganizationPlan(admin.db, 'acme', 'team')
    await nextTurn()
    const moved = lookup(created.key)
    expect(moved).not.toBe(known)
    expect(moved?.plan.id).toBe('team')
  })

  it('finds no key whose checksum is wrong, without reading the store for it', () => {
    const created = createKey(admin.db, { org: 'acme' })
    const last = created.key.at(-1) === 'a' ? 'b' : 'a'
    const mistyped = created.key.slice(0, -1) + last
    // Were its hash stored, a store read would find it.
    admin.db
      .prepare(
        `INSERT INTO api_keys (id, org_id, name, display_prefix, secret_sha256, created_at)
         SELECT 'key_mistyped', org_id, NULL, display_prefix, ?, created_at FROM api_keys WHERE id = ?`,
      )
      .run(hashSecret(mistyped), created.id)
    const lookup = keyOwnerLookup(serving.db)
    expect(lookup(mistyped)).toBeUndefined()
    expect(lookup(created.key)?.keyId).toBe(created.id)
  })

  it('refuses a key of the wrong shape without touching the store, readable or not', () => {
    const created = createKey(admin.db, { org: 'acme' })
    const lookup = keyOwnerLookup(serving.db)
    serving.db.close()
    expect(lookup(`${created.key.slice(0, -1)}!`)).toBeUndefined()
    expect(lookup('svc_sk_short')).toBeUndefined()
    expect(() => lookup(created.key)).toThrow()
  })
})
