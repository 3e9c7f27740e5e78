import type { Db } from '../../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary } from '../model.js'
import {
  type Matched,
  matchedSlots,
  matchSeries,
  type Page,
  type SeriesMatch,
  type SlotFilters,
} from './matches.js'
import type { SlotIndex } from './slotIndex.js'
import { type Series, SERVED_SERIES, TRAIT } from './series.js'
import { nthSmallest } from './startTimes.js'
import { iso, summaries, union } from './summaries.js'

export interface GroupMatch {
  key: string
  publisher: string
  location: LocationSummary
  provider?: ProviderSummary
  isVirtual: boolean
  serviceTypes: Coding[]
  specialties: Coding[]
  acceptingPatients?: AcceptingPatients
  bookingMethod?: 'online' | 'phone'
  nextAvailableStart: string
  totalSlots: number
}

/**
 * Per group of a search, by its number (Found.groups): the figures of its matching series, in arrays kept
 * from one search to the next (searches run one at a time). A Map of an object per group cost a quarter of a
 * search over 7,000 groups. A group's entries are those of the search whose number it bears, so nothing is
 * cleared between searches.
 */
class GroupTallies {
  #search = 0
  #searchOf = new Int32Array(0)
  /** The place in the match of its first matching series: where its key is read. */
  firsts = new Int32Array(0)
  counts = new Float64Array(0)
  nexts = new Float64Array(0)
  /** The traits of its matching series (series.ts), or-ed. */
  traits = new Int32Array(0)
  /** Its place on the page + 1; 0 when not on it. */
  onPage = new Int32Array(0)
  /** The groups with a match, in the order met, and (for the page) their next starts: the first `met`. */
  #met = new Int32Array(0)
  #metNexts = new Float64Array(0)
  met = 0

  /** Tallies the matching series by group. */
  tally(match: SeriesMatch, { counts, nexts }: Matched): void {
    this.#begin(match.groupSpan, counts.length)
    const { groups, traits } = match
    const search = this.#search
    let met = 0
    for (let at = 0; at < counts.length; at++) {
      const count = counts[at] as number
      if (count === 0) continue
      const next = nexts[at] as number
      const group = groups[at] as number
      if (this.#searchOf[group] !== search) {
        this.#searchOf[group] = search
        this.firsts[group] = at
        this.counts[group] = count
        this.nexts[group] = next
        this.traits[group] = traits[at] as number
        this.onPage[group] = 0
        this.#met[met++] = group
      } else {
        this.counts[group] = (this.counts[group] as number) + count
        if (next < (this.nexts[group] as number)) this.nexts[group] = next
        this.traits[group] = (this.traits[group] as number) | (traits[at] as number)
      }
    }
    this.met = met
  }

  /**
   * The groups that can be on a page through the `through`th in the order of next start: those whose next
   * start is no later than the `through`th's (every group of a national search sorted, to list 50, cost more
   * than the rest of the search).
   */
  candidates(through: number): number[] {
    const met = this.#met.subarray(0, this.met)
    if (through >= this.met) return Array.from(met)
    const nexts = this.#metNexts.subarray(0, this.met)
    for (let at = 0; at < met.length; at++) nexts[at] = this.nexts[met[at] as number] as number
    const latest = nthSmallest(nexts, through - 1)
    const candidates: number[] = []
    for (const group of met) if ((this.nexts[group] as number) <= latest) candidates.push(group)
    return candidates
  }

  #begin(span: number, series: number) {
    if (this.#met.length < series) {
      this.#met = new Int32Array(series * 2)
      this.#metNexts = new Float64Array(series * 2)
    }
    if (this.#searchOf.length < span) {
      const size = span * 2
      this.#searchOf = new Int32Array(size)
      this.firsts = new Int32Array(size)
      this.counts = new Float64Array(size)
      this.nexts = new Float64Array(size)
      this.traits = new Int32Array(size)
      this.onPage = new Int32Array(size)
      this.#search = 0
    }
    if (this.#search === 0x7fffffff) {
      this.#searchOf.fill(0)
      this.#search = 0
    }
    this.#search++
  }
}

const tallies = new GroupTallies()

/** The page of groups in the order soonest availability then key: only the candidates are sorted. */
function pageOf(page: Page, keyOf: (group: number) => string): { group: number; key: string }[] {
  const through = page.offset + page.limit
  const keyed = tallies
    .candidates(through)
    .map((group) => ({ group, next: tallies.nexts[group] as number, key: keyOf(group) }))
  keyed.sort((a, b) => a.next - b.next || (a.key < b.key ? -1 : 1))
  return keyed.slice(page.offset, through)
}

/**
 * The same matches grouped by provider at a location, ordered by soonest availability then key; `total` and
 * paging count groups. Groups are tallied from per-series figures, so the work follows the number of series,
 * not of slots.
 */
export function searchGroups(
  index: SlotIndex,
  filters: SlotFilters,
  page: Page,
): { groups: GroupMatch[]; total: number } {
  const match = matchSeries(index, filters)
  if (!match) return { groups: [], total: 0 }
  const matched = matchedSlots(index, match, filters)
  // Tallied from what the index packs: no series is looked at but those of the page's groups.
  tallies.tally(match, matched)
  const total = tallies.met
  const keyOf = (group: number) => (match.series[tallies.firsts[group] as number] as Series).groupKey
  const onPage = pageOf(page, keyOf)
  if (onPage.length === 0) return { groups: [], total }
  // The matching series of the page's groups only: a list for every group of a national search was made
  // and collected for a page of 50.
  const seriesOf = onPage.map((): Series[] => [])
  onPage.forEach(({ group }, place) => (tallies.onPage[group] = place + 1))
  const { counts } = matched
  for (let at = 0; at < counts.length; at++) {
    if ((counts[at] as number) === 0) continue
    const place = tallies.onPage[match.groups[at] as number] as number
    if (place > 0) seriesOf[place - 1]?.push(match.series[at] as Series)
  }

  const groups = onPage.map(({ group: tallied, key }, place): GroupMatch => {
    // One series at least: the one that made the tally.
    const matching = seriesOf[place] as Series[]
    const { group } = matching[0] as Series
    const accepting = new Set(matching.map((series) => series.accepting))
    const found: GroupMatch = {
      key,
      publisher: group.publisher,
      location: summaries.get<LocationSummary>(group.location),
      isVirtual: group.isVirtual,
      serviceTypes: union(matching.map((series) => summaries.get<Coding[]>(series.serviceTypes))),
      specialties: union(matching.map((series) => summaries.get<Coding[]>(series.specialties))),
      nextAvailableStart: iso(tallies.nexts[tallied] as number),
      totalSlots: tallies.counts[tallied] as number,
    }
    if (group.provider) found.provider = summaries.get<ProviderSummary>(group.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) found.acceptingPatients = only
    const traits = tallies.traits[tallied] as number
    if (traits & TRAIT.online) found.bookingMethod = 'online'
    else if (traits & TRAIT.phone) found.bookingMethod = 'phone'
    return found
  })
  return { groups, total }
}

/** Every coding of one kind present in the served series, with its display, sorted by system then code. */
export function listCodings(db: Db, column: 'service_types' | 'specialties'): Coding[] {
  const lists = db
    .statement(`SELECT DISTINCT r.${column} FROM sched_series r WHERE ${SERVED_SERIES}`)
    .pluck()
    .all() as string[]
  return union(lists.map((json) => JSON.parse(json) as Coding[])).toSorted(
    (a, b) => (a.system ?? '').localeCompare(b.system ?? '') || a.code.localeCompare(b.code),
  )
}
