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

/** Code systems whose concept lists are kept in memory per app; the least recently used goes first. */
const MAX_SYSTEMS = 32

/**
 * Every concept of a code system release, in its order, read once per app. A release's rows never change
 * under its id (ids are never reused; replacing a release makes a new id), so entries never go stale.
 */
export class ConceptLists {
  readonly #lists = new Map<number, CachedConcept[]>()

  constructor(private readonly db: Db) {}

  of(system: CodeSystemRow): CachedConcept[] {
    const cached = this.#lists.get(system.id)
    if (cached) {
      this.#lists.delete(system.id)
      this.#lists.set(system.id, cached)
      return cached
    }
    const concepts = allConcepts(this.db, system.id).map((concept) => ({
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
    this.#lists.set(system.id, concepts)
    if (this.#lists.size > MAX_SYSTEMS) this.#lists.delete(this.#lists.keys().next().value as number)
    return concepts
  }
}
