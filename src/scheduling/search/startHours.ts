import type { Db } from '../../db/open.js'
import { SLOTS_BY_SERIES } from '../schema.js'

/**
 * Where a page's matches lie, found from the hour each slot starts in, held per series (stored by the sync
 * in sched_series_hours, read once per sync of its publisher by the first search that needs them). A deep
 * page: a walk in start order reads each match it skips (offset 5,000 of a state's slots: 1.5 ms), while
 * summing the matching series' hours tells how many matches start before each hour, so the walk can start
 * at the last hour that does not pass the offset, with the offset less the matches before it. A first page
 * of matches spread over many series: their hours tell which few series can hold it, and before when
 * (firstMatches).
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
export interface SyncHours {
  bySeries: Map<number, Int32Array>
  served: Histogram
}

/** The hour a slot starting at `startMs` starts in. */
export const hourOfStart = (startMs: number) => Math.floor(startMs / HOUR_MS)

/** A series' start hours of one status as the sync stores them: sorted int32 in the platform's byte order. */
export function hoursBlob(hours: number[]): Buffer | null {
  if (hours.length === 0) return null
  const sorted = Int32Array.from(hours).sort()
  return Buffer.from(sorted.buffer, sorted.byteOffset, sorted.byteLength)
}

/** A stored blob as hours (a copy when SQLite's buffer is not aligned for int32 reads). */
function hoursOfBlob(blob: Buffer): Int32Array {
  if (blob.byteOffset % 4 === 0) return new Int32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4)
  return new Int32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength))
}

const HOURS_COLUMNS = ['free', 'busy', 'unavailable', 'tentative'] as const
const COUNT_COLUMNS = ['free_count', 'busy_count', 'unavailable_count', 'tentative_count'] as const

/**
 * The start hours the sync stored for the part's series of one status; undefined when a series with slots of
 * it has none stored (synced before they were).
 */
function storedHours(
  db: Db,
  part: { lo: number; hi: number },
  status: number,
): Map<number, Int32Array> | undefined {
  const rows = db
    .statement(
      `SELECT s.id, h.${HOURS_COLUMNS[status]} FROM sched_series s LEFT JOIN sched_series_hours h ON h.series_id = s.id
        WHERE s.id BETWEEN ? AND ? AND s.${COUNT_COLUMNS[status]} > 0`,
    )
    .raw()
    .all(part.lo, part.hi) as [number, Buffer | null][]
  const bySeries = new Map<number, Int32Array>()
  for (const [id, blob] of rows) {
    if (blob === null) return undefined
    bySeries.set(id, hoursOfBlob(blob))
  }
  return bySeries
}

/** A slot's hour in SQL, rounded down as Math.floor does, before 1970 too (integer division truncates). */
const HOUR_OF_START = `CASE WHEN t.start_ms >= 0 THEN t.start_ms / ${HOUR_MS} ELSE (t.start_ms + 1) / ${HOUR_MS} - 1 END`

/**
 * Reads the slots of the status of a part's series with ids from `lo` to `hi`, series by series in start
 * order; `served` names the series its histogram sums.
 */
export function loadHours(
  db: Db,
  part: { part: number; lo: number; hi: number },
  status: number,
  served: Iterable<number>,
): SyncHours {
  const bySeries = storedHours(db, part, status) ?? hoursFromSlots(db, part, status)
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

/** The part's series' start hours read from the slots themselves: for parts synced before hours were stored. */
function hoursFromSlots(db: Db, part: { part: number; lo: number; hi: number }, status: number) {
  // One row per series, its hours as a JSON array in start order (the index's): building those in SQLite
  // costs a third of handing every slot's row to JavaScript.
  const rows = db
    .statement(
      `SELECT t.series_id, json_group_array(${HOUR_OF_START}) FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
     WHERE t.series_id BETWEEN ? AND ? AND t.status = ? AND t.part = ? GROUP BY t.series_id`,
    )
    .raw()
    .all(part.lo, part.hi, status, part.part) as [number, string][]
  const bySeries = new Map<number, Int32Array>()
  // Sorted all the same: SQLite does not promise the order an aggregate sees its rows in.
  for (const [id, hours] of rows) bySeries.set(id, Int32Array.from(JSON.parse(hours) as number[]).sort())
  return bySeries
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

/** The index of the first hour of a series' ascending list at or after `hour` (past the end when none). */
function firstAtOrAfter(list: Int32Array, hour: number): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((list[mid] as number) < hour) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The series that can hold the first `count` matches from `startAfter` (every match when undefined), and
 * a moment before which those matches all start. From its hours, a series' next match starts no earlier
 * than its first hour from `startAfter`'s on, and no later than the end of its first hour after that one;
 * `count` series promise a match each before the `count`-th smallest of those latest ends, so the first
 * `count` matches start before it, and only series whose earliest start is before it hold any of them.
 * A page near the start of many series' matches (one specialty in every state) then reads a few dozen
 * series' slots of an hour or so instead of merging every publisher's walk. Undefined when fewer than
 * `count` series promise a match.
 */
export function firstMatches(
  lists: readonly Int32Array[],
  startAfter: number | undefined,
  count: number,
): { indexes: number[]; before: number } | undefined {
  const hour = startAfter === undefined ? Number.NEGATIVE_INFINITY : Math.floor(startAfter / HOUR_MS)
  const earliest = new Float64Array(lists.length).fill(Number.POSITIVE_INFINITY)
  const latest = new Float64Array(lists.length).fill(Number.POSITIVE_INFINITY)
  lists.forEach((list, index) => {
    const at = firstAtOrAfter(list, hour)
    if (at === list.length) return
    const first = list[at] as number
    earliest[index] = first * HOUR_MS
    // In `startAfter`'s own hour a slot may start before it: only a later hour promises a match.
    const promised = first > hour ? first : list[firstAtOrAfter(list, hour + 1)]
    if (promised !== undefined) latest[index] = (promised + 1) * HOUR_MS
  })
  const before = latest.slice().sort()[count - 1]
  if (before === undefined || before === Number.POSITIVE_INFINITY) return undefined
  const indexes: number[] = []
  earliest.forEach((start, index) => {
    if (start < before) indexes.push(index)
  })
  return { indexes, before }
}
