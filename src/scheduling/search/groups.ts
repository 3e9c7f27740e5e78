import type { Db } from '../../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary } from '../model.js'
import { matchedSlots, matchSeries, type Page, type SlotFilters } from './matches.js'
import type { SlotIndex } from './slotIndex.js'
import { SERVED_SERIES } from './series.js'
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

/** The rows of a table whose ids are given, by id: `select` names the table and columns, `id` first. */
function rowsById<T>(db: Db, select: string, ids: number[]): Map<number, T & { id: number }> {
  const rows = db
    .statement(`${select} WHERE id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as (T & { id: number })[]
  return new Map(rows.map((row) => [row.id, row]))
}

interface GroupTally {
  id: number
  key: string
  count: number
  next: number
  online: boolean
  phone: boolean
  series: number[]
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
  const { db } = index
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
        id: series.groupId,
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
    tally.series.push(series.id)
  })
  const ordered = [...tallies.values()].sort((a, b) => a.next - b.next || (a.key < b.key ? -1 : 1))
  const pageTallies = ordered.slice(page.offset, page.offset + page.limit)
  if (pageTallies.length === 0) return { groups: [], total: ordered.length }

  const details = rowsById<{
    publisher: string
    location: string
    provider: string | null
    is_virtual: number
  }>(
    db,
    'SELECT id, publisher, location, provider, is_virtual FROM sched_groups',
    pageTallies.map((tally) => tally.id),
  )
  // What the matching series of each group on the page declare, for the group's merged attributes.
  const attributes = rowsById<{
    service_types: string
    specialties: string
    accepting: AcceptingPatients | null
  }>(
    db,
    'SELECT id, service_types, specialties, accepting FROM sched_series',
    pageTallies.flatMap((tally) => tally.series),
  )
  const groups = pageTallies.map((tally): GroupMatch => {
    const detail = details.get(tally.id)
    if (!detail) throw new Error(`group ${tally.id} vanished mid-read`)
    const series = tally.series.flatMap((id) => attributes.get(id) ?? [])
    const accepting = new Set(series.map((entry) => entry.accepting))
    const group: GroupMatch = {
      key: tally.key,
      publisher: detail.publisher,
      location: summaries.get<LocationSummary>(detail.location),
      isVirtual: detail.is_virtual === 1,
      serviceTypes: union(series.map((entry) => summaries.get<Coding[]>(entry.service_types))),
      specialties: union(series.map((entry) => summaries.get<Coding[]>(entry.specialties))),
      nextAvailableStart: iso(tally.next),
      totalSlots: tally.count,
    }
    if (detail.provider) group.provider = summaries.get<ProviderSummary>(detail.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) group.acceptingPatients = only
    if (tally.online) group.bookingMethod = 'online'
    else if (tally.phone) group.bookingMethod = 'phone'
    return group
  })
  return { groups, total: ordered.length }
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
