import type { Db } from '../db/open.js'
import { keepWhole } from '../http/json.js'
import type { PropertyValue } from './model.js'
import {
  type CodeSystemRow,
  type ConceptRow,
  childrenOf,
  conceptProperties,
  findCodeSystem,
  findConcept,
  parentsOf,
} from './store.js'

/**
 * What lookups and validations read of the store, remembered per connection. Which release a URL (and
 * version) names changes when a release is imported or replaced, by this process or another, so those
 * answers are forgotten as soon as the database changes (`Db.changeGeneration`). A release's concepts never
 * change under its id (ids are never reused; replacing a release makes a new id), so what was read of a
 * concept stays true and is only dropped for room.
 */

const MAX_RELEASES = 1024
const MAX_CONCEPTS = 10_000
/** Distinct questions (property lists) whose answers are kept per concept. */
const MAX_ANSWERS = 8

/** A concept of one release, with what $lookup may ask of it, each read on first use. */
export class RememberedConcept {
  #properties: PropertyValue[] | undefined
  #parents: string[] | undefined
  #children: string[] | undefined
  readonly #answers = new Map<string, unknown>()

  constructor(
    private readonly db: Db,
    private readonly systemId: number,
    readonly concept: ConceptRow,
  ) {}

  get properties(): PropertyValue[] {
    this.#properties ??= conceptProperties(this.db, this.systemId, this.concept.code)
    return this.#properties
  }

  get parents(): string[] {
    this.#parents ??= parentsOf(this.db, this.systemId, this.concept.code)
    return this.#parents
  }

  get children(): string[] {
    this.#children ??= childrenOf(this.db, this.systemId, this.concept.code)
    return this.#children
  }

  /**
   * An answer made from this concept and its release alone, kept for the next identical question: such an
   * answer never changes. Kept whole (frozen, serialized once): every caller asking gets the same object.
   */
  answer<T extends object>(question: string, build: () => T): T {
    if (!this.#answers.has(question)) remember(this.#answers, MAX_ANSWERS, question, keepWhole(build()))
    return this.#answers.get(question) as T
  }
}

/**
 * Which release a URL names, and what was read of its concepts, remembered for one app's connection (see the
 * top of this file for when each is forgotten).
 */
export class RememberedReleases {
  #generation = -1
  readonly #releases = new Map<string, CodeSystemRow | null>()
  /** By release id and code; `null` remembers a code the release does not have. */
  readonly #concepts = new Map<string, RememberedConcept | null>()

  constructor(private readonly db: Db) {}

  /** The release named, or without a version the one loaded last, as of the database's latest commit. */
  codeSystem(url: string, version?: string): CodeSystemRow | undefined {
    const generation = this.db.changeGeneration()
    if (generation !== this.#generation) {
      this.#releases.clear()
      this.#generation = generation
    }
    // Length-prefixed, so no url and version pair can spell another's key.
    const key = version === undefined ? `-${url}` : `${version.length}:${version}${url}`
    let release = this.#releases.get(key)
    if (release === undefined) {
      release = remember(this.#releases, MAX_RELEASES, key, findCodeSystem(this.db, url, version) ?? null)
    }
    return release ?? undefined
  }

  /** A concept of a release, or undefined when the release does not have the code. */
  concept(system: CodeSystemRow, code: string): RememberedConcept | undefined {
    const key = `${system.id}\n${code}`
    let known = this.#concepts.get(key)
    if (known === undefined) {
      const concept = findConcept(this.db, system.id, code)
      known = remember(
        this.#concepts,
        MAX_CONCEPTS,
        key,
        concept ? new RememberedConcept(this.db, system.id, concept) : null,
      )
    }
    return known ?? undefined
  }
}

/** Bounded by dropping the oldest entry: a full memory keeps answering, from the store, what it lost. */
function remember<V>(map: Map<string, V>, max: number, key: string, value: V): V {
  if (map.size >= max) map.delete(map.keys().next().value as string)
  map.set(key, value)
  return value
}
