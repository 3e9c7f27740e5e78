import { sized } from './arrays.js'
import { RoundMarks } from './roundMarks.js'
import type { Series } from './series.js'
import { countBefore, offsetStart, type StartsTally, tallyThrough } from './startTimes.js'

/**
 * A publisher's groups that one of its lists of series (those of a service type, a state, …: slotIndex.ts)
 * holds slots of a status in, from a moment on, with their next starts in page order. A grouped search over
 * lists alone (no other filter, no time window) is answered from these: which groups, how many, and the
 * page's, without looking at each of ~10,000 matching series. Kept per list and status while every series
 * of the list has the same slots from the asked moment on: from just past the latest start before the
 * moment the figures were made at, through the earliest next start. As time passes a list is made again
 * when its earliest next start has passed: a few dozen series.
 */
export interface ListGroups {
  /** The moments these figures hold for: later than `after`, up to `through`. */
  after: number
  through: number
  /** Its groups with slots, a bit per group place. */
  bits: Uint32Array
  /** How many groups that is. */
  size: number
  /** Those groups in page order (next start, then key): their places, next starts and keys. */
  places: Int32Array
  nexts: Float64Array
  keys: string[]
}

/** What a list's groups are made from: per place of a series, its figures from the moment and its group. */
export interface ListSource {
  groups: number
  figures(place: number, into: SlotFigures): void
  groupOf(place: number): number
  /** Per group place: its key, and its place in the order of the keys of the groups the list can hold. */
  keys: readonly string[]
  keyRanks: Int32Array
}

/** A series' slots from a moment: how many, the first one's start and the start before the moment. */
export interface SlotFigures {
  count: number
  first: number
  before: number
}

/**
 * Per group place, the group's next start, valid where the group is marked in this making: kept from one
 * making to the next (a Map per list cost most of making it).
 */
const scratch = {
  met: new RoundMarks(),
  nexts: new Float64Array(0),
}

/** The groups of the series at the places of `list`, from the moment `source` reads their figures at. */
export function makeListGroups(list: ArrayLike<number>, source: ListSource): ListGroups {
  if (scratch.nexts.length < source.groups) {
    const size = Math.max(source.groups, scratch.nexts.length * 2)
    scratch.nexts = new Float64Array(size)
  }
  const { met, nexts } = scratch
  met.begin(source.groups)
  const figures: SlotFigures = { count: 0, first: 0, before: 0 }
  const bits = new Uint32Array((source.groups + 31) >>> 5)
  const present: number[] = []
  let after = Number.NEGATIVE_INFINITY
  let through = Number.POSITIVE_INFINITY
  for (let at = 0; at < list.length; at++) {
    const place = list[at] as number
    source.figures(place, figures)
    if (figures.before > after) after = figures.before
    if (figures.first < through) through = figures.first
    if (figures.count === 0) continue
    const group = source.groupOf(place)
    if (met.mark(group)) {
      nexts[group] = figures.first
      setBit(bits, group)
      present.push(group)
    } else if (figures.first < (nexts[group] as number)) nexts[group] = figures.first
  }
  // Filled by plain loops: a typed array's `from` with a mapping function cost ~0.1 µs an element.
  const size = present.length
  const presentNexts = new Float64Array(size)
  const ranks = new Int32Array(size)
  for (let at = 0; at < size; at++) {
    const group = present[at] as number
    presentNexts[at] = nexts[group] as number
    ranks[at] = source.keyRanks[group] as number
  }
  const order = orderByNextThenRank(presentNexts, ranks, source.keyRanks.length)
  const places = new Int32Array(size)
  const orderedNexts = new Float64Array(size)
  const keys = sized<string>(size)
  for (let rank = 0; rank < size; rank++) {
    const at = order[rank] as number
    const group = present[at] as number
    places[rank] = group
    orderedNexts[rank] = presentNexts[at] as number
    keys[rank] = source.keys[group] as string
  }
  return { after, through, bits, size, places, nexts: orderedNexts, keys }
}

/**
 * The indexes of `nexts` (finite) in the order of next start, then rank (each below `bound`, none twice).
 * Starts in whole seconds (as feeds write them), counted from the earliest and times `ranks` plus the rank,
 * are exact in a float64 for any span a feed holds: those sort natively, with no comparator (sorted by one,
 * the groups of a list over every series of the national bench set cost ~0.4 ms a publisher).
 */
export function orderByNextThenRank(nexts: Float64Array, ranks: Int32Array, bound: number): Int32Array {
  const count = nexts.length
  const order = new Int32Array(count)
  let earliest = Number.POSITIVE_INFINITY
  let latest = Number.NEGATIVE_INFINITY
  let wholeSeconds = true
  for (const next of nexts) {
    if (next < earliest) earliest = next
    if (next > latest) latest = next
    if (next % 1000 !== 0) wholeSeconds = false
  }
  if (!(wholeSeconds && ((latest - earliest) / 1000 + 1) * bound <= Number.MAX_SAFE_INTEGER)) {
    for (let at = 0; at < count; at++) order[at] = at
    return order.sort(
      (a, b) => (nexts[a] as number) - (nexts[b] as number) || (ranks[a] as number) - (ranks[b] as number),
    )
  }
  const atOfRank = new Int32Array(bound)
  const packed = new Float64Array(count)
  for (let at = 0; at < count; at++) {
    const rank = ranks[at] as number
    atOfRank[rank] = at
    packed[at] = (((nexts[at] as number) - earliest) / 1000) * bound + rank
  }
  packed.sort()
  for (let at = 0; at < count; at++) order[at] = atOfRank[(packed[at] as number) % bound] as number
  return order
}

/** Whether the figures hold at `moment`. */
export function holdsAt(groups: ListGroups, moment: number): boolean {
  return groups.after < moment && moment <= groups.through
}

/** Group keys in page order, after their next starts: every grouped listing sorts them so. */
export function byKey(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Leading characters of a key that `keyLead` reads: 7 bits each, 42 bits, exact in a float64. */
const LEAD_CHARS = 6

/**
 * A number in the order of the keys' first characters (group keys are base64url hashes; any character past
 * ASCII counts as the last): ordering by it, then by the keys when tied, orders as `byKey`. Hundreds of keys
 * tied at a deep page's first start compared as strings were a fifth of its search.
 */
export function keyLead(key: string): number {
  let lead = 0
  for (let at = 0; at < LEAD_CHARS; at++)
    lead = lead * 128 + (at < key.length ? Math.min(key.charCodeAt(at), 127) : 0)
  return lead
}

/** Sets bit `n` of the words. */
export function setBit(words: Int32Array | Uint32Array, n: number): void {
  words[n >>> 5] = (words[n >>> 5] as number) | (1 << (n & 31))
}

/** Whether bit `n` of the words is set. */
export function hasBit(words: Int32Array | Uint32Array, n: number): boolean {
  return ((words[n >>> 5] as number) & (1 << (n & 31))) !== 0
}

/** Set bits in a word. */
export function bitCount(word: number): number {
  let bits = word - ((word >>> 1) & 0x55555555)
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333)
  return (((bits + (bits >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/** A group on a page, as the listings show it: its matching series in id order and their figures. */
export interface GroupOnPage {
  key: string
  next: number
  count: number
  /** The traits of its matching series (series.ts), or-ed. */
  traits: number
  series: Series[]
}

/** A cursor in one list's groups in page order, for merging the lists of a search. */
export interface Cursor {
  groups: ListGroups
  at: number
  /** What the list's publisher is to the caller. */
  owner: number
}

const before = (a: Cursor, b: Cursor) => {
  const nextA = a.groups.nexts[a.at] as number
  const nextB = b.groups.nexts[b.at] as number
  return (
    nextA < nextB || (nextA === nextB && (a.groups.keys[a.at] as string) < (b.groups.keys[b.at] as string))
  )
}

/** Groups left before the offset below which `skipBefore` stops: the merge passes them as soon. */
const SKIP_LEFT = 128

/**
 * Moves the cursors past groups that lie before the `offset`th group of them all in page order (from 0),
 * each passed once (`met`: true when it was already); returns how many groups it passed. Where they stop is
 * found by counting each list's groups from its cursor by binary search (`offsetStart`): a deep page is
 * then merged from near it rather than from the first group (5,000 of them: most of a search). Lists that
 * share no group (one per publisher) count exactly, and stop at the groups tied with the offset's; lists
 * that do (several of one publisher) count a group once per list it is in, so the cursors stop earlier, and
 * the counting is done again from there while it passes groups.
 */
export function skipBefore(
  cursors: Cursor[],
  offset: number,
  met: (owner: number, place: number) => boolean,
): number {
  let passed = 0
  const through = (moment: number, tally: StartsTally) => {
    for (const { groups, at } of cursors) tallyThrough(groups.nexts, at, groups.size, moment, tally)
  }
  while (offset - passed >= SKIP_LEFT) {
    // The earliest start through which more than the groups left lie: the offset's group's or one before.
    const moment = offsetStart(through, offset - passed)
    if (moment === undefined) return passed
    const before = passed
    for (const cursor of cursors) {
      const { groups, owner } = cursor
      const end = countBefore(groups.nexts, moment, cursor.at, groups.size)
      for (let at = cursor.at; at < end; at++) if (!met(owner, groups.places[at] as number)) passed++
      cursor.at = end
    }
    if (passed === before) return passed
  }
  return passed
}

/**
 * The groups of several lists in page order from their cursors on, each once (a group in several lists
 * comes first at its soonest: `seen` marks each, true when it was already), through the `through`th:
 * `visit` is handed each with its owner, group place, next start and key. A heap of the cursors, moved as
 * they go: the work follows the page, not the groups.
 */
export function eachInPageOrder(
  cursors: Cursor[],
  through: number,
  seen: (owner: number, place: number) => boolean,
  visit: (owner: number, place: number, next: number, key: string) => void,
): void {
  const heap = cursors.filter((cursor) => cursor.at < cursor.groups.size)
  const down = (from: number) => {
    let at = from
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let least = at
      if (left < heap.length && before(heap[left] as Cursor, heap[least] as Cursor)) least = left
      if (right < heap.length && before(heap[right] as Cursor, heap[least] as Cursor)) least = right
      if (least === at) return
      ;[heap[at], heap[least]] = [heap[least] as Cursor, heap[at] as Cursor]
      at = least
    }
  }
  for (let at = (heap.length >> 1) - 1; at >= 0; at--) down(at)
  let visited = 0
  while (heap.length > 0 && visited < through) {
    const top = heap[0] as Cursor
    const { groups, at, owner } = top
    const place = groups.places[at] as number
    if (!seen(owner, place)) {
      visit(owner, place, groups.nexts[at] as number, groups.keys[at] as string)
      visited++
    }
    if (at + 1 < groups.size) top.at = at + 1
    else heap[0] = heap[heap.length - 1] as Cursor
    if (at + 1 >= groups.size) heap.pop()
    down(0)
  }
}
