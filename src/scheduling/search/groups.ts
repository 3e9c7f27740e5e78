import type { Db } from '../../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary } from '../model.js'
import { matchedSlots, matchSeries, type Page, type SlotFilters } from './matches.js'
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

interface GroupTally {
  id: number
  /** One of its matching series, by its place in the match: where its key is read, when it is wanted. */
  first: number
  /** Read only for the groups that can be on the page (pageOf). */
  key?: string
  count: number
  next: number
  /** The traits of its matching series (series.ts), or-ed. */
  traits: number
}

/**
 * The page of groups in the order soonest availability then key. Only the groups that can be on it are
 * sorted: those available no later than the last one on it (every group of a national search sorted, to
 * list 50, cost more than the rest of the search).
 */
function pageOf(
  tallies: GroupTally[],
  page: Page,
  keyOf: (tally: GroupTally) => string,
): Required<GroupTally>[] {
  const through = page.offset + page.limit
  let candidates = tallies
  if (through < tallies.length) {
    const latest = nthSmallest(
      tallies.map((tally) => tally.next),
      through - 1,
    )
    candidates = tallies.filter((tally) => tally.next <= latest)
  }
  const keyed = candidates.map((tally) => Object.assign(tally, { key: keyOf(tally) }))
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
  const { counts, nexts } = matchedSlots(index, match, filters)
  const { groupIds, traits } = match
  // Tallied from what the index packs: no series is looked at but those of the page's groups.
  const tallies = new Map<number, GroupTally>()
  for (let at = 0; at < counts.length; at++) {
    const count = counts[at] as number
    if (count === 0) continue
    const next = nexts[at] as number
    const groupId = groupIds[at] as number
    let tally = tallies.get(groupId)
    if (!tally) {
      tally = { id: groupId, first: at, count: 0, next, traits: 0 }
      tallies.set(groupId, tally)
    }
    tally.count += count
    tally.next = Math.min(tally.next, next)
    tally.traits |= traits[at] as number
  }
  const keyOf = (tally: GroupTally) => (match.series[tally.first] as Series).groupKey
  const pageTallies = pageOf([...tallies.values()], page, keyOf)
  if (pageTallies.length === 0) return { groups: [], total: tallies.size }
  // The matching series of the page's groups only: a list for every group of a national search was made
  // and collected for a page of 50.
  const seriesOf = new Map(pageTallies.map((tally) => [tally.id, [] as Series[]]))
  for (let at = 0; at < counts.length; at++) {
    if ((counts[at] as number) > 0) seriesOf.get(groupIds[at] as number)?.push(match.series[at] as Series)
  }

  const groups = pageTallies.map((tally): GroupMatch => {
    // One series at least: the one that made the tally.
    const matching = seriesOf.get(tally.id) as Series[]
    const { group } = matching[0] as Series
    const accepting = new Set(matching.map((series) => series.accepting))
    const found: GroupMatch = {
      key: tally.key,
      publisher: group.publisher,
      location: summaries.get<LocationSummary>(group.location),
      isVirtual: group.isVirtual,
      serviceTypes: union(matching.map((series) => summaries.get<Coding[]>(series.serviceTypes))),
      specialties: union(matching.map((series) => summaries.get<Coding[]>(series.specialties))),
      nextAvailableStart: iso(tally.next),
      totalSlots: tally.count,
    }
    if (group.provider) found.provider = summaries.get<ProviderSummary>(group.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) found.acceptingPatients = only
    if (tally.traits & TRAIT.online) found.bookingMethod = 'online'
    else if (tally.traits & TRAIT.phone) found.bookingMethod = 'phone'
    return found
  })
  return { groups, total: tallies.size }
}

/** Every coding of one kind present in the served series, with its display, sorted by system then code. */
export function listCodings(db: Db, column: 'service_types' | 'specialties'): Coding[] {
  const lists = db
    .statement(`SELECT DISTINCT r.${column} FROM sched_series r WHERE ${SERVED_SERIES}`)
    .pluck()
    .all() as string[]
  return union(lists.map((json) => JSON.parse(json) as Coding[])).sort(
    (a, b) => (a.system ?? '').localeCompare(b.system ?? '') || a.code.localeCompare(b.code),
  )
}
