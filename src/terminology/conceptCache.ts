import type { Db } from '../db/open.js'
import { allConcepts, type CodeSystemRow } from './store.js'

export interface CachedConcept {
  code: string
  display: string | undefined
  abstract: boolean
  inactive: boolean
  /** Lower-cased code and display words, for the expansion text filter. */
  codeLower: string
  words: string[]
}

/** Code systems whose concept lists are kept in memory per connection; the least recently used goes first. */
const MAX_SYSTEMS = 32
const caches = new WeakMap<Db, Map<number, CachedConcept[]>>()

/**
 * Every concept of a code system release, in its order, read once per process. A release's rows never
 * change under its id (ids are never reused; replacing a release makes a new id), so entries never go stale.
 */
export function conceptsOf(db: Db, system: CodeSystemRow): CachedConcept[] {
  let cache = caches.get(db)
  if (!cache) {
    cache = new Map()
    caches.set(db, cache)
  }
  const cached = cache.get(system.id)
  if (cached) {
    cache.delete(system.id)
    cache.set(system.id, cached)
    return cached
  }
  const concepts = allConcepts(db, system.id).map((concept) => ({
    code: concept.code,
    display: concept.display ?? undefined,
    abstract: concept.abstract,
    inactive: concept.status !== 'active',
    codeLower: concept.code.toLowerCase(),
    words: (concept.display ?? '')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  }))
  cache.set(system.id, concepts)
  if (cache.size > MAX_SYSTEMS) cache.delete(cache.keys().next().value as number)
  return concepts
}
