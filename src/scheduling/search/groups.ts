import type { Db } from '../../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary } from '../model.js'
import { matchedSlots, matchSeries, type Page, type SlotFilters } from './matches.js'
import type { SlotIndex } from './slotIndex.js'
import { type Series, SERVED_SERIES } from './series.js'
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
  key: string
  count: number
  next: number
  online: boolean
  phone: boolean
  /** Its matching series (one at least). */
  series: Series[]
}

/**
 * The page of groups in the order soonest availability then key. Only the groups that can be on it are
 * sorted: those available no later than the last one on it (every group of a national search sorted, to
 * list 50, cost more than the rest of the search).
 */
function pageOf(tallies: GroupTally[], page: Page): GroupTally[] {
  const through = page.offset + page.limit
  let candidates = tallies
  if (through < tallies.length) {
    const latest = nthSmallest(
      Float64Array.from(tallies, (tally) => tally.next),
      through - 1,
    )
    candidates = tallies.filter((tally) => tally.next <= latest)
  }
  candidates.sort((a, b) => a.next - b.next || (a.key < b.key ? -1 : 1))
  return candidates.slice(page.offset, through)
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
  const tallies = new Map<number, GroupTally>()
  match.series.forEach((series, at) => {
    const count = counts[at] as number
    const next = nexts[at] as number
    if (count === 0) return
    let tally = tallies.get(series.groupId)
    if (!tally) {
      tally = {
        key: series.groupKey,
        count: 0,
        next,
        online: false,
        phone: false,
        series: [],
      }
      tallies.set(series.groupId, tally)
    }
    tally.count += count
    tally.next = Math.min(tally.next, next)
    tally.online ||= series.online
    tally.phone ||= series.phone
    tally.series.push(series)
  })
  const pageTallies = pageOf([...tallies.values()], page)
  if (pageTallies.length === 0) return { groups: [], total: tallies.size }

  const groups = pageTallies.map((tally): GroupMatch => {
    const { group } = tally.series[0] as Series
    const accepting = new Set(tally.series.map((series) => series.accepting))
    const found: GroupMatch = {
      key: tally.key,
      publisher: group.publisher,
      location: summaries.get<LocationSummary>(group.location),
      isVirtual: group.isVirtual,
      serviceTypes: union(tally.series.map((series) => summaries.get<Coding[]>(series.serviceTypes))),
      specialties: union(tally.series.map((series) => summaries.get<Coding[]>(series.specialties))),
      nextAvailableStart: iso(tally.next),
      totalSlots: tally.count,
    }
    if (group.provider) found.provider = summaries.get<ProviderSummary>(group.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) found.acceptingPatients = only
    if (tally.online) found.bookingMethod = 'online'
    else if (tally.phone) found.bookingMethod = 'phone'
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
