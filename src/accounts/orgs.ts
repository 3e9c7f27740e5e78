import type { Db } from '../db/open.js'
import { planIds } from './plans.js'
import { UserError } from '../userError.js'

export interface Organization {
  id: number
  slug: string
  name: string
  plan: string
  createdAt: string
}

export class AccountError extends UserError {
  override name = 'AccountError'
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/

const SELECT_ORG = `SELECT id, slug, name, plan_id AS plan, created_at AS createdAt FROM organizations`

function assertPlan(db: Db, plan: string): void {
  const known = planIds(db)
  if (!known.includes(plan)) throw new AccountError(`Unknown plan "${plan}"; plans: ${known.join(', ')}`)
}

export function createOrganization(
  db: Db,
  input: { slug: string; name?: string; plan?: string },
  now: number = Date.now(),
): Organization {
  if (!SLUG.test(input.slug)) {
    throw new AccountError(
      `Invalid slug "${input.slug}": use 1-64 lowercase letters, digits and inner hyphens (e.g. acme-health)`,
    )
  }
  const plan = input.plan ?? 'developer'
  assertPlan(db, plan)
  if (findOrganization(db, input.slug)) throw new AccountError(`Organization "${input.slug}" already exists`)
  db.prepare('INSERT INTO organizations (slug, name, plan_id, created_at) VALUES (?, ?, ?, ?)').run(
    input.slug,
    input.name ?? input.slug,
    plan,
    new Date(now).toISOString(),
  )
  return requireOrganization(db, input.slug)
}

export function findOrganization(db: Db, slug: string): Organization | undefined {
  return db.prepare(`${SELECT_ORG} WHERE slug = ?`).get(slug) as Organization | undefined
}

export function requireOrganization(db: Db, slug: string): Organization {
  const org = findOrganization(db, slug)
  if (!org) throw new AccountError(`No organization "${slug}"; see \`svc orgs list\``)
  return org
}

export function listOrganizations(db: Db): Organization[] {
  return db.prepare(`${SELECT_ORG} ORDER BY slug`).all() as Organization[]
}

export function setOrganizationPlan(db: Db, slug: string, plan: string): Organization {
  assertPlan(db, plan)
  requireOrganization(db, slug)
  db.prepare('UPDATE organizations SET plan_id = ? WHERE slug = ?').run(plan, slug)
  return requireOrganization(db, slug)
}
