import type { Wanted } from './series.js'

/** The listed filters a search may ask a hundred values of, as Wanted names them. */
type ManyValued = 'serviceTypeCode' | 'specialtyCodes' | 'specialtyTokens'

/** A publisher's values of those filters: the keys of its lists by value. */
export type PublisherValues = Record<ManyValued, Iterable<string>>

/**
 * How many served publishers list each value of the filters a search may ask many values of: a value none
 * lists names no series, and is left out of a search's wanted values (`known`) before it is looked up in
 * every publisher's lists (100 service types, five of them real, were 5,000 lookups a pass over 50 publishers,
 * and a search makes two or three passes).
 */
export class ListedValues {
  readonly #counts: Record<ManyValued, Map<string, number>> = {
    serviceTypeCode: new Map(),
    specialtyCodes: new Map(),
    specialtyTokens: new Map(),
  }

  /** Counts a publisher's values in (`by` 1) or out (-1). */
  count(values: PublisherValues, by: 1 | -1): void {
    for (const name of Object.keys(this.#counts) as ManyValued[]) {
      const counts = this.#counts[name]
      for (const value of values[name]) {
        const count = (counts.get(value) ?? 0) + by
        if (count > 0) counts.set(value, count)
        else counts.delete(value)
      }
    }
  }

  /** The wanted values less those no publisher lists (a filter asked keeps its list, empty or not). */
  known(wanted: Wanted): Wanted {
    const keep = (name: ManyValued) => wanted[name]?.filter((value) => this.#counts[name].has(value))
    return {
      ...wanted,
      serviceTypeCode: keep('serviceTypeCode'),
      specialtyCodes: keep('specialtyCodes'),
      specialtyTokens: keep('specialtyTokens'),
    }
  }
}
