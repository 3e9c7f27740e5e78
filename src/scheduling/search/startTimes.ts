import type { Db } from '../../db/open.js'
import { runNow, type Steps } from '../../workInSlices.js'
import { SLOTS_BY_SERIES } from '../schema.js'

/**
 * Each series' slot starts (epoch ms, ascending), per status, as the sync stores them in
 * sched_series_starts and a server reads them once per sync (free slots' as it loads the publisher, the
 * others' when a search first needs them). They answer
 * what a search would otherwise read slots for, in a binary search per matching series whatever the number
 * of slots:
 * - how many of a series' slots lie before a moment or within a window, and its next start from a moment
 *   (a search from now once time has passed many slots: a feed synced days ago, or a window);
 * - where a deep page's matches lie: summing the matching series' starts per hour tells how many matches
 *   start before each hour, so the walk can start at the last hour that does not pass the offset, with the
 *   offset less the matches before it (skipAhead); over every series, each publisher's served starts sorted
 *   together tell the very start of the match at the offset (nthStart);
 * - which few series can hold the first page of matches spread over many series, and before when
 *   (firstMatches).
 */

export const HOUR_MS = 3_600_000

/** Hours from the first to the last counted slot past which a page walks instead (a feed's stray year). */
const MAX_SPAN_HOURS = 2 * 366 * 24

/**
 * One part's slots of one status: every series' starts end to end, ascending within each. Series `id`'s
 * starts are `starts[at[id - lo]]` up to `starts[at[id - lo + 1]]`: one array per part, so that a search over
 * a thousand series reads memory in a few places rather than a thousand.
 */
export interface SyncStarts {
  lo: number
  at: Int32Array
  starts: Float64Array
}

/** Series `id`'s place in its part's `at`; -1 for a series outside the part, which has no starts there. */
function placeOf(sync: SyncStarts, id: number): number {
  const index = id - sync.lo
  return index >= 0 && index + 1 < sync.at.length ? index : -1
}

/**
 * Where series `id`'s starts begin in its part's array, and (`startsEnd`) where they end, exclusive; both 0
 * for a series outside the part. Two numbers rather than a range object: read for thousands of series a search.
 */
export function startsBegin(sync: SyncStarts, id: number): number {
  const index = placeOf(sync, id)
  return index < 0 ? 0 : (sync.at[index] as number)
}

export function startsEnd(sync: SyncStarts, id: number): number {
  const index = placeOf(sync, id)
  return index < 0 ? 0 : (sync.at[index + 1] as number)
}

/** A series' starts (a view into its part's array); none for a series outside the part. */
export function startsOfSeries(sync: SyncStarts, id: number): Float64Array {
  return sync.starts.subarray(startsBegin(sync, id), startsEnd(sync, id))
}

const hourOf = (startMs: number) => Math.floor(startMs / HOUR_MS)

/**
 * A series' slot starts of one status as the sync stores them: sorted float64 in the platform's byte order
 * (`starts` sorted already, ascending).
 */
export function startsBlob(starts: Float64Array): Buffer | null {
  if (starts.length === 0) return null
  return Buffer.from(starts.buffer, starts.byteOffset, starts.byteLength)
}

const STARTS_COLUMNS = ['free', 'busy', 'unavailable', 'tentative'] as const
const COUNT_COLUMNS = ['free_count', 'busy_count', 'unavailable_count', 'tentative_count'] as const

/** Each series' starts as read: by id, ascending ids, the starts as stored bytes or as numbers. */
type ReadStarts = [id: number, starts: Buffer | number[]][]

/**
 * The starts the sync stored for the part's series of one status; undefined when a series with slots of it
 * has none stored (synced before they were).
 */
function storedStarts(db: Db, part: { lo: number; hi: number }, status: number): ReadStarts | undefined {
  const rows = db
    .statement(
      `SELECT s.id, h.${STARTS_COLUMNS[status]} FROM sched_series s LEFT JOIN sched_series_starts h ON h.series_id = s.id
        WHERE s.id BETWEEN ? AND ? AND s.${COUNT_COLUMNS[status]} > 0 ORDER BY s.id`,
    )
    .raw()
    .all(part.lo, part.hi) as [number, Buffer | null][]
  return rows.some(([, blob]) => blob === null) ? undefined : (rows as ReadStarts)
}

/** The part's series' starts read from the slots themselves: for parts synced before starts were stored. */
function startsFromSlots(db: Db, part: { part: number; lo: number; hi: number }, status: number) {
  // One row per series, its starts as a JSON array: building those in SQLite costs a third of handing every
  // slot's row to JavaScript.
  const rows = db
    .statement(
      `SELECT t.series_id, json_group_array(t.start_ms) FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
     WHERE t.series_id BETWEEN ? AND ? AND t.status = ? AND t.part = ? GROUP BY t.series_id ORDER BY t.series_id`,
    )
    .raw()
    .all(part.lo, part.hi, status, part.part) as [number, string][]
  return rows.map(([id, starts]): ReadStarts[number] => [id, JSON.parse(starts) as number[]])
}

/**
 * The series' starts end to end in one array. Read numbers are sorted there (SQLite does not promise the
 * order an aggregate sees its rows in); stored bytes are copied as bytes, as SQLite's buffer need not be
 * aligned for float64 reads.
 */
function packed(lo: number, hi: number, rows: ReadStarts): { at: Int32Array; starts: Float64Array } {
  const lengths = rows.map(([, list]) => (Array.isArray(list) ? list.length : list.byteLength / 8))
  const starts = new Float64Array(lengths.reduce((sum, length) => sum + length, 0))
  const bytes = new Uint8Array(starts.buffer)
  const at = new Int32Array(hi - lo + 2)
  let row = 0
  let cursor = 0
  for (let id = lo; id <= hi; id++) {
    at[id - lo] = cursor
    const [rowId, list] = rows[row] ?? []
    if (rowId !== id || list === undefined) continue
    const length = lengths[row] as number
    if (Array.isArray(list)) {
      starts.set(list, cursor)
      starts.subarray(cursor, cursor + length).sort()
    } else bytes.set(list, cursor * 8)
    cursor += length
    row++
  }
  at[hi - lo + 1] = cursor
  return { at, starts }
}

/** Series whose stored starts one statement of `loadStartsSteps` reads. */
const STARTS_READ_SERIES = 256

/**
 * The starts of the slots of the status of a part's series with ids from `lo` to `hi`, in steps: the stored
 * ones STARTS_READ_SERIES series at a time. A part synced before starts were stored is read from its slots
 * in one.
 */
export function* loadStartsSteps(
  db: Db,
  part: { part: number; lo: number; hi: number },
  status: number,
): Steps<SyncStarts> {
  let rows: ReadStarts = []
  for (let lo = part.lo; lo <= part.hi; lo += STARTS_READ_SERIES) {
    const some = storedStarts(db, { lo, hi: Math.min(part.hi, lo + STARTS_READ_SERIES - 1) }, status)
    if (!some) {
      rows = startsFromSlots(db, part, status)
      break
    }
    for (const row of some) rows.push(row)
    yield
  }
  return { lo: part.lo, ...packed(part.lo, part.hi, rows) }
}

/** Starts sorted at once, natively, before sorted blocks are merged: about a millisecond's work. */
const SORT_BLOCK = 1 << 15
/** Starts merged between two pauses of `startsTogetherSteps`. */
const MERGE_STEP = 1 << 16

/** The starts of these series of a part, together in one ascending array. */
export function startsTogether(sync: SyncStarts, ids: readonly number[]): Float64Array {
  return runNow(startsTogetherSteps(sync, ids))
}

/** `startsTogether` in steps of about a millisecond (sortedSteps). */
export function* startsTogetherSteps(sync: SyncStarts, ids: readonly number[]): Steps<Float64Array> {
  const lists = ids.map((id) => startsOfSeries(sync, id))
  const source = new Float64Array(lists.reduce((sum, list) => sum + list.length, 0))
  let cursor = 0
  for (const list of lists) {
    source.set(list, cursor)
    cursor += list.length
  }
  return yield* sortedSteps(source)
}

/**
 * A slot start and a number below 2^21 (the place of its series' group) in one number,
 * `start in seconds · 2^21 + place`, exact while starts are whole seconds (a start of 2027 needs 31 bits):
 * sorted, such numbers are in the order of the starts, and each says its group.
 */
export const PLACES_PACKED = 2 ** 21

/**
 * The starts of the series at each place (`ids[place]` its id) packed with `placeOf(place)`
 * (PLACES_PACKED), ascending; undefined when a start is not a whole second or a number to pack is too large.
 */
export function* packedStartsSteps(
  sync: SyncStarts,
  ids: readonly number[],
  placeOf: (place: number) => number,
): Steps<Float64Array | undefined> {
  const lists = ids.map((id) => startsOfSeries(sync, id))
  const packed = new Float64Array(lists.reduce((sum, list) => sum + list.length, 0))
  let cursor = 0
  for (let place = 0; place < lists.length; place++) {
    const packedPlace = placeOf(place)
    if (packedPlace >= PLACES_PACKED) return undefined
    for (const start of lists[place] as Float64Array) {
      if (!Number.isInteger(start / 1000)) return undefined
      packed[cursor++] = (start / 1000) * PLACES_PACKED + packedPlace
    }
    if (place % 1024 === 1023) yield
  }
  return yield* sortedSteps(packed)
}

/**
 * The starts of packed starts (`packedStartsSteps`) by class, each class's ascending: `classOf` gives each
 * packed place's class (below `classes`). Two passes, the classes' sizes first: a pause every MERGE_STEP.
 */
export function* startsByClassSteps(
  packed: Float64Array,
  classOf: Uint8Array,
  classes: number,
): Steps<Float64Array[]> {
  const sizes = new Int32Array(classes)
  for (let at = 0; at < packed.length; at++) {
    if (at % MERGE_STEP === 0) yield
    const nth = classOf[placeUnpacked(packed[at] as number)] as number
    sizes[nth] = (sizes[nth] as number) + 1
  }
  const lists = Array.from(sizes, (size) => new Float64Array(size))
  const filled = new Int32Array(classes)
  for (let at = 0; at < packed.length; at++) {
    if (at % MERGE_STEP === 0) yield
    const value = packed[at] as number
    const nth = classOf[placeUnpacked(value)] as number
    const into = filled[nth] as number
    ;(lists[nth] as Float64Array)[into] = secondUnpacked(value) * 1000
    filled[nth] = into + 1
  }
  return lists
}

/** The starts of packed starts (`packedStartsSteps`), in their order: a pause every MERGE_STEP. */
export function* unpackedSteps(packed: Float64Array): Steps<Float64Array> {
  const starts = new Float64Array(packed.length)
  for (let at = 0; at < packed.length; at++) {
    if (at % MERGE_STEP === 0) yield
    starts[at] = secondUnpacked(packed[at] as number) * 1000
  }
  return starts
}

/** The second a packed start (PLACES_PACKED) starts at. */
export function secondUnpacked(value: number): number {
  return Math.floor(value / PLACES_PACKED)
}

/** The place packed with a start (PLACES_PACKED). */
export function placeUnpacked(value: number): number {
  // Not `value % PLACES_PACKED`: a float's remainder took most of a walk.
  return (value - secondUnpacked(value) * PLACES_PACKED) | 0
}

/**
 * `values` sorted ascending in steps of about a millisecond (a publisher of a million slots takes a tenth of
 * a second): blocks of SORT_BLOCK sorted one at a time, natively, then merged two by two, a pause every
 * MERGE_STEP values. `values` is sorted in place or used as scratch: the sorted array is returned.
 */
function* sortedSteps(values: Float64Array): Steps<Float64Array> {
  let source: Float64Array = values
  const total = source.length
  for (let block = 0; block < total; block += SORT_BLOCK) {
    yield
    source.subarray(block, block + SORT_BLOCK).sort()
  }
  if (total <= SORT_BLOCK) return source
  let target: Float64Array = new Float64Array(total)
  for (let width = SORT_BLOCK; width < total; width *= 2) {
    for (let lo = 0; lo < total; lo += 2 * width) {
      const middle = Math.min(lo + width, total)
      const hi = Math.min(lo + 2 * width, total)
      let left = lo
      let right = middle
      let out = lo
      while (out < hi) {
        yield
        const stop = Math.min(hi, out + MERGE_STEP)
        for (; out < stop; out++) {
          if (right >= hi || (left < middle && (source[left] as number) <= (source[right] as number)))
            target[out] = source[left++] as number
          else target[out] = source[right++] as number
        }
      }
    }
    ;[source, target] = [target, source]
  }
  return source
}

/**
 * Where the match at `offset` (from 0) among the starts of ascending `lists` from `startAfter` on lies: its
 * start, and how many matches start before it (the walk then skips only those sharing its start). A binary
 * search over the time, counting by a binary search in each list. Undefined when there are not that many
 * matches, or none to skip.
 */
export function nthStart(
  lists: readonly Float64Array[],
  startAfter: number | undefined,
  offset: number,
): { from: number; skipped: number } | undefined {
  const begins = lists.map((list) => (startAfter === undefined ? 0 : countBefore(list, startAfter)))
  const through = (moment: number, tally: StartsTally) =>
    lists.forEach((list, nth) => tallyThrough(list, begins[nth] as number, list.length, moment, tally))
  const from = offsetStart(through, offset)
  if (from === undefined) return undefined
  const tally = emptyTally()
  through(from - 1, tally)
  return tally.count === 0 ? undefined : { from, skipped: tally.count }
}

/** Starts counted through a moment: how many, the latest of them and the earliest after it. */
export interface StartsTally {
  count: number
  latest: number
  next: number
}

function emptyTally(): StartsTally {
  return { count: 0, latest: Number.NEGATIVE_INFINITY, next: Number.POSITIVE_INFINITY }
}

/** Adds the ascending `list[from]` to `list[to - 1]` through `moment` to `tally`. */
export function tallyThrough(
  list: Float64Array,
  from: number,
  to: number,
  moment: number,
  tally: StartsTally,
): void {
  const end = countBefore(list, moment + 1, from, to)
  tally.count += end - from
  if (end > from) tally.latest = Math.max(tally.latest, list[end - 1] as number)
  if (end < to) tally.next = Math.min(tally.next, list[end] as number)
}

/**
 * The earliest start through which more than `offset` starts lie, of those `through` counts, up to `until`
 * (included); undefined when not that many lie through it. Each count is made at a moment between the
 * starts known to bound the answer, by turns interpolated from their counts and halfway, and the bounds then
 * move to the starts met: a few counts on real feeds, at worst twice as many as halving the distinct starts,
 * where halving the milliseconds took thirty-two.
 */
export function offsetStart(
  through: (moment: number, tally: StartsTally) => void,
  offset: number,
  until = Number.POSITIVE_INFINITY,
): number | undefined {
  const tally = emptyTally()
  const countThrough = (moment: number) => {
    tally.count = 0
    tally.latest = Number.NEGATIVE_INFINITY
    tally.next = Number.POSITIVE_INFINITY
    through(moment, tally)
    return tally
  }
  let first = countThrough(Number.NEGATIVE_INFINITY).next
  if (countThrough(until).count <= offset) return undefined
  let last = tally.latest
  let below = 0
  let above = tally.count
  let halve = false
  while (first < last) {
    const share = (offset + 0.5 - below) / (above - below)
    const guess = halve ? (first + last) / 2 : first + share * (last - first)
    const mid = Math.min(last - 1, Math.max(first, Math.floor(guess)))
    halve = !halve
    const { count, latest, next } = countThrough(mid)
    if (count > offset) {
      last = latest
      above = count
    } else {
      first = next
      below = count
    }
  }
  return first
}

/**
 * How many of the ascending `starts[from]` to `starts[to - 1]` lie before `moment`, as the index of the first
 * at or after it.
 */
export function countBefore(starts: Float64Array, moment: number, from = 0, to = starts.length): number {
  // Searches from now mostly meet series whose starts all lie ahead: one read settles those.
  if (from >= to || (starts[from] as number) >= moment) return from
  let lo = from + 1
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((starts[mid] as number) < moment) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Where the starts from `from` on (undefined: unbounded) begin in `starts[first]` to `starts[end - 1]`. */
export function firstFrom(
  starts: Float64Array,
  from: number | undefined,
  first: number,
  end: number,
): number {
  return from === undefined ? first : countBefore(starts, from, first, end)
}

/** Where the starts through `through` (included; undefined: unbounded) end in `starts[first]` to `starts[end - 1]`. */
export function endThrough(
  starts: Float64Array,
  through: number | undefined,
  first: number,
  end: number,
): number {
  return through === undefined ? end : countBefore(starts, through + 1, first, end)
}

/**
 * Ascending lists of starts, each a range of a shared array (`starts[lo]` to `starts[hi - 1]`): `visit` is
 * called with each. A series' starts are a range of its part's array; a view of each would be an object per
 * series per search.
 */
export type StartLists = (visit: (starts: Float64Array, lo: number, hi: number) => void) => void

/**
 * Adds to `hours` (hour `from` first) the starts from `starts[lo]` to `starts[hi - 1]`, ascending, that lie in
 * it. Apart from its caller's closure, whose variables V8 reads from memory at each step: 1.6 times slower.
 */
function countByHour(hours: Int32Array, from: number, starts: Float64Array, lo: number, hi: number): void {
  const fromMs = from * HOUR_MS
  // From the last start back: a start in the hour of the one after it needs no division.
  let hour = Number.POSITIVE_INFINITY
  let hourStart = Number.POSITIVE_INFINITY
  for (let index = hi - 1; index >= lo; index--) {
    const start = starts[index] as number
    if (start < fromMs) break
    if (start < hourStart) {
      hour = hourOf(start)
      hourStart = hour * HOUR_MS
    }
    hours[hour - from] = (hours[hour - from] as number) + 1
  }
}

/**
 * How far a page at `offset` of matches starting from `startAfter` (all matches when undefined; none
 * bounded by a latest start) can be skipped: a moment at or after `startAfter` and how many matches lie
 * between the two. `total` is the number of matches; `lists` hold each matching series' starts. Undefined
 * when nothing can be skipped.
 */
export function skipAhead(
  lists: StartLists,
  total: number,
  startAfter: number | undefined,
  offset: number,
): { from: number; skipped: number } | undefined {
  let last = Number.NEGATIVE_INFINITY
  let earliest = Number.POSITIVE_INFINITY
  lists((starts, lo, hi) => {
    if (hi <= lo) return
    last = Math.max(last, hourOf(starts[hi - 1] as number))
    earliest = Math.min(earliest, hourOf(starts[lo] as number))
  })
  // The first hour that starts at or after `startAfter`: matches before it are counted by subtraction.
  const from = startAfter === undefined ? earliest : Math.ceil(startAfter / HOUR_MS)
  if (!(last >= from) || last - from > MAX_SPAN_HOURS) return undefined
  const hours = new Int32Array(last - from + 1)
  lists((starts, lo, hi) => countByHour(hours, from, starts, lo, hi))
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

/**
 * Which series can hold the first `count` matches, given each series' next match (`nexts`, +Infinity when
 * none), and a moment before which those matches all start. The `count` soonest next matches are `count`
 * matches, so the first `count` matches start at or before the latest of them, and only series whose next
 * match does hold any. A page near the start of many series' matches (one specialty in every state) then
 * reads a few dozen series' slots instead of merging every publisher's walk. Undefined when fewer than
 * `count` series have a match.
 */
export function firstMatches(
  nexts: readonly number[],
  count: number,
): { indexes: number[]; before: number } | undefined {
  if (count > nexts.length) return undefined
  const latest = nthSmallest(nexts.slice(), count - 1)
  if (latest === Number.POSITIVE_INFINITY) return undefined
  const indexes: number[] = []
  nexts.forEach((next, index) => {
    if (next <= latest) indexes.push(index)
  })
  return { indexes, before: latest + 1 }
}

/**
 * The value that would stand at `nth` (from 0) if `values` were sorted, found by quickselect (Hoare's
 * partitions): a page of 50 among thousands of series or groups needs that one value, not the whole order.
 * Reorders `values`.
 */
export function nthSmallest(values: number[] | Float64Array, nth: number): number {
  let lo = 0
  let hi = values.length - 1
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1] as number
    let i = lo
    let j = hi
    while (i <= j) {
      while ((values[i] as number) < pivot) i++
      while ((values[j] as number) > pivot) j--
      if (i <= j) {
        const swap = values[i] as number
        values[i] = values[j] as number
        values[j] = swap
        i++
        j--
      }
    }
    if (nth <= j) hi = j
    else if (nth >= i) lo = i
    else return values[nth] as number
  }
  return values[nth] as number
}
