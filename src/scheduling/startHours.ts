import { cachedStatement, type Db } from '../db/open.js'
import { SLOTS_BY_START } from './schema.js'

/**
 * Where a deep page begins, found without walking every match before it. A walk in start order reads each
 * match it skips (offset 5,000 of a state's slots: 1.5 ms); instead the slots of a part are held here as
 * the hour each starts in, per series (read once per sync of its publisher, by the first deep page that
 * needs them). Summing the matching series' hours tells how many matches start before each hour, so the walk
 * can start at the last hour that does not pass the offset, with the offset less the matches before it.
 */

export const HOUR_MS = 3_600_000

/** Hours from the first to the last counted slot past which a page walks instead (a feed's stray year). */
const MAX_SPAN_HOURS = 2 * 366 * 24

/** Slots per hour from hour `first` on. */
export interface Histogram {
  first: number
  counts: Int32Array
}

/** One part's slots of one status as hours: each series' in ascending order, and the served series' summed. */
export interface PartHours {
  bySeries: Map<number, Int32Array>
  served: Histogram
}

const hourOf = (ms: number) => Math.floor(ms / HOUR_MS)

/** Reads a part's slots of the status in start order; `served` names the series its histogram sums. */
export function loadHours(db: Db, part: number, status: number, served: Iterable<number>): PartHours {
  const rows = cachedStatement(
    db,
    `SELECT t.series_id, t.start_ms FROM sched_slots t INDEXED BY ${SLOTS_BY_START}
     WHERE t.part = ? AND t.status = ?`,
  )
    .raw()
    .iterate(part, status) as IterableIterator<[number, number]>
  const lists = new Map<number, number[]>()
  for (const [id, start] of rows) {
    const list = lists.get(id)
    if (list) list.push(hourOf(start))
    else lists.set(id, [hourOf(start)])
  }
  const bySeries = new Map<number, Int32Array>()
  for (const [id, list] of lists) bySeries.set(id, Int32Array.from(list))
  let first = Number.POSITIVE_INFINITY
  let last = Number.NEGATIVE_INFINITY
  const servedLists = [...served].flatMap((id) => bySeries.get(id) ?? [])
  for (const list of servedLists) {
    first = Math.min(first, list[0] as number)
    last = Math.max(last, list[list.length - 1] as number)
  }
  if (servedLists.length === 0 || last - first > MAX_SPAN_HOURS) {
    return { bySeries, served: { first: 0, counts: new Int32Array(0) } }
  }
  const counts = new Int32Array(last - first + 1)
  for (const list of servedLists) {
    for (const hour of list) counts[hour - first] = (counts[hour - first] as number) + 1
  }
  return { bySeries, served: { first, counts } }
}

/**
 * How far a page at `offset` of matches starting from `startAfter` (all matches when undefined; none
 * bounded by a latest start) can be skipped: a moment at or after `startAfter` and how many matches lie
 * between the two. `total` is the number of matches; `lists` hold each matching series' hours and
 * `histograms` those of whole sets of matching series, together every match exactly once. Undefined
 * when nothing can be skipped.
 */
export function skipAhead(
  lists: readonly Int32Array[],
  histograms: readonly Histogram[],
  total: number,
  startAfter: number | undefined,
  offset: number,
): { from: number; skipped: number } | undefined {
  let last = Number.NEGATIVE_INFINITY
  let earliest = Number.POSITIVE_INFINITY
  for (const list of lists) {
    if (list.length === 0) continue
    last = Math.max(last, list[list.length - 1] as number)
    earliest = Math.min(earliest, list[0] as number)
  }
  for (const { first, counts } of histograms) {
    if (counts.length === 0) continue
    last = Math.max(last, first + counts.length - 1)
    earliest = Math.min(earliest, first)
  }
  // The first hour that starts at or after `startAfter`: matches before it are counted by subtraction.
  const from = startAfter === undefined ? earliest : Math.ceil(startAfter / HOUR_MS)
  if (!(last >= from) || last - from > MAX_SPAN_HOURS) return undefined
  const hours = new Int32Array(last - from + 1)
  for (const list of lists) {
    for (let index = list.length - 1; index >= 0; index--) {
      const hour = list[index] as number
      if (hour < from) break
      hours[hour - from] = (hours[hour - from] as number) + 1
    }
  }
  for (const { first, counts } of histograms) {
    for (let hour = Math.max(first, from); hour < first + counts.length; hour++) {
      hours[hour - from] = (hours[hour - from] as number) + (counts[hour - first] as number)
    }
  }
  let skipped = total
  for (const count of hours) skipped -= count
  if (skipped > offset) return undefined
  let hour = 0
  while (hour < hours.length && skipped + (hours[hour] as number) <= offset) {
    skipped += hours[hour] as number
    hour++
  }
  return skipped === 0 ? undefined : { from: (from + hour) * HOUR_MS, skipped }
}
