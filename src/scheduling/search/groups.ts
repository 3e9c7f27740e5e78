import type { Db } from '../../db/open.js'
import type { AcceptingPatients, Coding } from '../model.js'
import { RawJson } from '../../rawJson.js'
import type { GroupOnPage } from './listGroups.js'
import type { Page, SlotFilters } from './matches.js'
import type { SlotIndex } from './slotIndex.js'
import { type Series, SERVED_SERIES, statusIndex, TRAIT } from './series.js'
import { RoundMarks } from './roundMarks.js'
import { pageInOrder } from './pageOrder.js'
import { iso, summaries, union } from './summaries.js'

export interface GroupMatch {
  key: string
  publisher: string
  /** Its LocationSummary and ProviderSummary as stored. */
  location: RawJson
  provider?: RawJson
  isVirtual: boolean
  serviceTypes: Coding[]
  specialties: Coding[]
  acceptingPatients?: AcceptingPatients
  bookingMethod?: 'online' | 'phone'
  nextAvailableStart: string
  totalSlots: number
}

/**
 * Per group of a search, by its number (SlotIndex.eachMatching): the figures of its matching series, in arrays
 * kept from one search to the next (searches run one at a time). A Map of an object per group cost a quarter
 * of a search over 7,000 groups. A group's entries are those of the search whose number it bears, so nothing
 * is cleared between searches.
 */
class GroupTallies {
  /** The groups tallied in this search: their figures below are this search's. */
  readonly #tallied = new RoundMarks()
  counts = new Float64Array(0)
  nexts = new Float64Array(0)
  /** The traits of its matching series (series.ts), or-ed. */
  traits = new Int32Array(0)
  /**
   * Its matching series, as the search's entries (SlotIndex.entrySeries) in the order met: its first and
   * last, and per entry the next of its group (-1: none).
   */
  #firstEntry = new Int32Array(0)
  #lastEntry = new Int32Array(0)
  #nextEntry = new Int32Array(0)
  /** The groups with a match, in the order met, and (for the page) their next starts: the first `met`. */
  #metGroups = new Int32Array(0)
  #metNexts = new Float64Array(0)
  met = 0

  /** Starts a search's tally. */
  begin(): void {
    this.#tallied.begin()
    this.met = 0
  }

  /** Tallies a matching series into its group (an arrow: handed to the index as it is). */
  readonly add = (group: number, count: number, next: number, traits: number, entry: number): void => {
    if (group >= this.counts.length) this.#growGroups(group + 1)
    if (entry >= this.#nextEntry.length) this.#growEntries(entry + 1)
    this.#nextEntry[entry] = -1
    if (this.#tallied.mark(group)) {
      this.counts[group] = count
      this.nexts[group] = next
      this.traits[group] = traits
      this.#firstEntry[group] = entry
      this.#lastEntry[group] = entry
      this.#metGroups[this.met++] = group
    } else {
      this.counts[group] = (this.counts[group] as number) + count
      if (next < (this.nexts[group] as number)) this.nexts[group] = next
      this.traits[group] = (this.traits[group] as number) | traits
      this.#nextEntry[this.#lastEntry[group] as number] = entry
      this.#lastEntry[group] = entry
    }
  }

  firstEntryOf(group: number): number {
    return this.#firstEntry[group] as number
  }

  /** The entries of the group's matching series, in the order met. */
  entriesOf(group: number): number[] {
    const entries: number[] = []
    for (let entry = this.#firstEntry[group] as number; entry >= 0; entry = this.#nextEntry[entry] as number)
      entries.push(entry)
    return entries
  }

  /** The page's groups in the order soonest availability then key (pageOrder.ts). */
  page(page: Page, keyOf: (group: number) => string): { group: number; key: string }[] {
    const met = this.#metGroups
    const nexts = this.#metNexts.subarray(0, this.met)
    for (let at = 0; at < this.met; at++) nexts[at] = this.nexts[met[at] as number] as number
    return pageInOrder(
      nexts,
      (nth) => this.nexts[met[nth] as number] as number,
      (nth) => keyOf(met[nth] as number),
      page.offset,
      page.limit,
    ).map(({ nth, key }) => ({ group: met[nth] as number, key }))
  }

  /** Room for group numbers below `span`, keeping what this search tallied so far. */
  #growGroups(span: number) {
    const size = Math.max(span, this.counts.length * 2, 1024)
    this.#tallied.ensure(size)
    this.counts = grown(this.counts, size)
    this.nexts = grown(this.nexts, size)
    this.traits = grown(this.traits, size)
    this.#firstEntry = grown(this.#firstEntry, size)
    this.#lastEntry = grown(this.#lastEntry, size)
  }

  /** Room for entries below `entries` (and as many groups met), keeping what this search tallied so far. */
  #growEntries(entries: number) {
    const size = Math.max(entries, this.#nextEntry.length * 2, 1024)
    this.#nextEntry = grown(this.#nextEntry, size)
    this.#metGroups = grown(this.#metGroups, size)
    this.#metNexts = new Float64Array(size)
  }
}

/** A copy of `array` with room for `size` elements. */
function grown<T extends Int32Array | Float64Array>(array: T, size: number): T {
  const made = (array instanceof Int32Array ? new Int32Array(size) : new Float64Array(size)) as T
  made.set(array)
  return made
}

const tallies = new GroupTallies()

/**
 * The same matches grouped by provider at a location, ordered by soonest availability then key; `total` and
 * paging count groups. A search from now (or at any time) over one indexed filter alone, or none, takes its
 * groups from the index's lists (listGroups.ts), kept from one search to the next while they hold; one in a
 * window, or from a moment of its own, or over filters the lists do not settle (traits), over every series or
 * thousands a filter wants, from the hours (SlotIndex.groupsInWindow); one over fewer series tallies its
 * matching series as the index finds them. Either way the work follows the number of series, groups or hours,
 * not of slots, and only the page's groups' series are looked at.
 */
export function searchGroups(
  index: SlotIndex,
  filters: SlotFilters,
  page: Page,
): { groups: GroupMatch[]; total: number } {
  const status = statusIndex(filters.status)
  const { startAfter, startBefore } = filters
  // The lists' groups from a moment of the caller's own would be made again for every moment asked.
  const listsKept = startBefore === undefined && (filters.startsNow || startAfter === undefined)
  const lists = () =>
    startBefore === undefined ? index.groupsOfLists(filters, status, startAfter, page) : undefined
  const listed =
    (listsKept ? lists() : undefined) ??
    index.groupsInWindow(filters, status, startAfter, startBefore, page) ??
    (listsKept ? undefined : lists())
  const { total, groups } = listed ?? tallied(index, filters, status, page)
  return { groups: groups.map(toGroupMatch), total }
}

/** The groups of a search tallied from its matching series. */
function tallied(
  index: SlotIndex,
  filters: SlotFilters,
  status: number,
  page: Page,
): { total: number; groups: GroupOnPage[] } {
  tallies.begin()
  index.eachMatching(filters, status, filters.startAfter, filters.startBefore, tallies.add)
  const onPage = tallies.page(page, (group) => index.entrySeries(tallies.firstEntryOf(group)).groupKey)
  const groups = onPage.map(({ group, key }) => ({
    key,
    next: tallies.nexts[group] as number,
    count: tallies.counts[group] as number,
    traits: tallies.traits[group] as number,
    // In the order the index holds them (by id), not the order met, which follows the values asked for.
    series: tallies
      .entriesOf(group)
      .map((entry) => index.entrySeries(entry))
      .sort((a, b) => a.id - b.id),
  }))
  return { total: tallies.met, groups }
}

function toGroupMatch({ key, next, count, traits, series }: GroupOnPage): GroupMatch {
  // One series at least: the one that made the group match.
  const { group } = series[0] as Series
  const accepting = new Set(series.map((each) => each.accepting))
  const found: GroupMatch = {
    key,
    publisher: group.publisher,
    location: new RawJson(group.location),
    isVirtual: group.isVirtual,
    serviceTypes: union(series.map((each) => summaries.get<Coding[]>(each.serviceTypes))),
    specialties: union(series.map((each) => summaries.get<Coding[]>(each.specialties))),
    nextAvailableStart: iso(next),
    totalSlots: count,
  }
  if (group.provider) found.provider = new RawJson(group.provider)
  const [only] = accepting
  if (accepting.size === 1 && only) found.acceptingPatients = only
  if (traits & TRAIT.online) found.bookingMethod = 'online'
  else if (traits & TRAIT.phone) found.bookingMethod = 'phone'
  return found
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
