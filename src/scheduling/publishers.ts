import { isIP } from 'node:net'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Db } from '../db/open.js'
import { isInternalAddress } from '../ingest/addresses.js'
import { deletePublisherSlots } from './sync/slotWriter.js'
import { UserError } from '../userError.js'

export interface Publisher {
  slug: string
  displayName: string
  manifestUrl: string
  enabled: boolean
}

export class PublisherError extends UserError {
  override name = 'PublisherError'
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/

function toPublisher(row: {
  slug: string
  displayName: string
  manifestUrl: string
  enabled: number
}): Publisher {
  return { ...row, enabled: row.enabled === 1 }
}

const SELECT = `SELECT slug, display_name AS displayName, manifest_url AS manifestUrl, enabled FROM publishers`

export function listPublishers(db: Db): Publisher[] {
  return (db.statement(`${SELECT} ORDER BY slug`).all() as Parameters<typeof toPublisher>[0][]).map(
    toPublisher,
  )
}

/**
 * A manifest location as callers may see it: no credentials, query or fragment (tokens travel there), a local
 * manifest as `file:` and its file name only, and a host on the operator's private network withheld.
 */
export function shownManifestUrl(location: string): string {
  if (!/^https?:/i.test(location))
    return `file:${basename(location.startsWith('file:') ? fileURLToPath(location) : location)}`
  const url = new URL(location)
  url.username = ''
  url.password = ''
  url.search = ''
  url.hash = ''
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || (isIP(host) !== 0 && isInternalAddress(host))) {
    url.hostname = 'withheld.invalid'
    url.port = ''
  }
  return url.href
}

/** The publishers as the API lists them: manifest locations as callers may see them. */
export const publishersShown = (db: Db): Publisher[] =>
  listPublishers(db).map((publisher) => ({
    ...publisher,
    manifestUrl: shownManifestUrl(publisher.manifestUrl),
  }))

export function findPublisher(db: Db, slug: string): Publisher | undefined {
  const row = db.statement(`${SELECT} WHERE slug = ?`).get(slug) as
    Parameters<typeof toPublisher>[0] | undefined
  return row && toPublisher(row)
}

export function addPublisher(
  db: Db,
  input: { slug: string; manifestUrl: string; displayName?: string; enabled?: boolean },
  now: number = Date.now(),
): Publisher {
  if (!SLUG.test(input.slug)) {
    throw new PublisherError(
      `Invalid slug "${input.slug}": use 1-64 lowercase letters, digits and inner hyphens`,
    )
  }
  if (findPublisher(db, input.slug)) throw new PublisherError(`Publisher "${input.slug}" already exists`)
  db.prepare(
    'INSERT INTO publishers (slug, display_name, manifest_url, enabled, created_at) VALUES (?, ?, ?, ?, ?)',
  ).run(
    input.slug,
    input.displayName ?? input.slug,
    input.manifestUrl,
    input.enabled === false ? 0 : 1,
    new Date(now).toISOString(),
  )
  return findPublisher(db, input.slug) as Publisher
}

export function setPublisherEnabled(db: Db, slug: string, enabled: boolean): Publisher {
  const result = db.prepare('UPDATE publishers SET enabled = ? WHERE slug = ?').run(enabled ? 1 : 0, slug)
  if (result.changes === 0) throw new PublisherError(`No publisher "${slug}"; see \`svc publishers list\``)
  return findPublisher(db, slug) as Publisher
}

/** Removes the publisher and every slot it contributed, in one transaction. */
export function removePublisher(db: Db, slug: string): void {
  db.transaction(() => {
    deletePublisherSlots(db, slug)
    const result = db.prepare('DELETE FROM publishers WHERE slug = ?').run(slug)
    if (result.changes === 0) throw new PublisherError(`No publisher "${slug}"; see \`svc publishers list\``)
  }).immediate()
}
