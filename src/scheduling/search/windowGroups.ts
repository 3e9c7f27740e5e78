import type { Steps } from '../../workInSlices.js'
import { bitCount, hasBit } from './listGroups.js'
import type { RoundMarks } from './roundMarks.js'
import { countBefore, PLACES_PACKED, placeUnpacked, secondUnpacked } from './startTimes.js'

const HOUR_S = 3_600
/**
 * Words a publisher's hours may take at most per slot it holds, beyond a floor: as many bytes as its packed
 * starts (8 a slot). A feed spread thinly over years with thousands of series is tallied instead.
 */
const WORDS_PER_SLOT = 2
const MIN_WORDS = 2 ** 16
/** Packed starts read between two steps. */
const STEP_SLOTS = 65_536

/**
 * Per hour, which of a publisher's groups (or series) hold a slot of one status starting in it: a bitset of
 * `words` 32-bit words per hour from `firstHour` (hours since the epoch), made from its packed starts. A
 * grouped search in a long window counts its groups by or-ing the whole hours inside it and walks slots
 * only in the part-hours at its edges and as far as its page reaches. The hours are the leaves of a segment
 * tree (`bits`, node `n` at `n * words`: hour `h` at node `hours + h`, node `n` the union of nodes `2n` and
 * `2n + 1`), so that any run of hours is the union of at most two nodes a level: a month's window ors ~20
 * sets, not 720.
 */
export interface HourBits {
  firstHour: number
  hours: number
  words: number
  bits: Int32Array
}

/**
 * The hours' bits of a publisher's packed starts (ascending), a bit per `bitOf(series place)` below
 * `size`; undefined when they would take more than WORDS_PER_SLOT words a slot (its windows are then tallied).
 */
export function* hourBitsSteps(
  packed: Float64Array,
  size: number,
  bitOf: (place: number) => number,
): Steps<HourBits | undefined> {
  const words = Math.max(1, Math.ceil(size / 32))
  if (packed.length === 0) return { firstHour: 0, hours: 0, words, bits: new Int32Array(0) }
  const hourOf = (value: number) => Math.floor(secondUnpacked(value) / HOUR_S)
  const firstHour = hourOf(packed[0] as number)
  const hours = hourOf(packed[packed.length - 1] as number) - firstHour + 1
  if (2 * hours * words > Math.max(MIN_WORDS, WORDS_PER_SLOT * packed.length)) return undefined
  const bits = new Int32Array(2 * hours * words)
  for (let at = 0; at < packed.length; at++) {
    const value = packed[at] as number
    const bit = bitOf(placeUnpacked(value))
    const word = (hours + hourOf(value) - firstHour) * words + (bit >>> 5)
    bits[word] = (bits[word] as number) | (1 << (bit & 31))
    if (at % STEP_SLOTS === STEP_SLOTS - 1) yield
  }
  for (let node = hours - 1; node > 0; node--) {
    const to = node * words
    const left = 2 * node * words
    for (let word = 0; word < words; word++)
      bits[to + word] = (bits[left + word] as number) | (bits[left + words + word] as number)
    if (node % 1024 === 0) yield
  }
  return { firstHour, hours, words, bits }
}

/** One publisher's share of a window search. */
export interface WindowSpan {
  /** Its served starts packed with their series' places, and their hours' groups and series. */
  packed: Float64Array
  groupHours: HourBits
  seriesHours: HourBits
  /** Per series place, its group's place; the number its groups are counted from in this search. */
  groupOf: readonly number[]
  groupsBefore: number
  /** The series the search's filters want, a bit per place (undefined: every one). */
  wanted: Int32Array | undefined
  /** When the wanted series are whole groups (a group's every series or none): those groups, a bit each. */
  wantedGroups: Int32Array | undefined
}

/** Where second `second`'s starts begin in packed starts (from `lo` on). */
export function packedFrom(packed: Float64Array, second: number, lo = 0): number {
  return countBefore(packed, second * PLACES_PACKED, lo)
}

/** Whether the series at `place` is wanted. */
export function isWanted(wanted: Int32Array | undefined, place: number): boolean {
  return wanted === undefined || hasBit(wanted, place)
}

/**
 * Over seconds `first` up to `end` (excluded): how many groups hold a slot of a wanted series (`total`),
 * and the second up to which the window's slots must be walked to meet its first `page` groups by next
 * start (`walkEnd`: the end of the run of hours in which the `page`th group is first met; every group met
 * before it, and every one tied with it, is met by then). Whole hours are read from their bitsets, the part-hours
 * at either edge are walked. A publisher whose wanted series are all its series, or whole groups, is read by
 * its groups' bits, counted a word at a time; any other, by its series' bits, each wanted one marked by its group in
 * `groups` (begun here, with room for `span`).
 */
export function windowGroups(
  spans: readonly WindowSpan[],
  first: number,
  end: number,
  page: number,
  groups: { marks: RoundMarks; span: number },
): { total: number; walkEnd: number } {
  // Head [first, wholeFrom), whole hours [wholeFrom, wholeTo), tail [wholeTo, end).
  const wholeFrom = Math.min(Math.ceil(first / HOUR_S) * HOUR_S, end)
  const wholeTo = Math.max(wholeFrom, Math.floor(end / HOUR_S) * HOUR_S)
  const byGroup = (span: WindowSpan) => !span.wanted || span.wantedGroups !== undefined
  const hoursOf = (span: WindowSpan) => (byGroup(span) ? span.groupHours : span.seriesHours)
  const offsets: number[] = []
  let size = 0
  for (const span of spans) {
    offsets.push(size)
    size += hoursOf(span).words
  }
  // The groups met, or the series met when some are not wanted: a bit each after the publishers' before.
  const seen = new Int32Array(size)
  groups.marks.begin(groups.span)
  let total = 0
  const walk = (from: number, to: number) => {
    spans.forEach((span, owner) => {
      const { packed, wanted, groupOf } = span
      const grouped = byGroup(span)
      const offset = offsets[owner] as number
      const hi = packedFrom(packed, to)
      for (let at = packedFrom(packed, from); at < hi; at++) {
        const place = placeUnpacked(packed[at] as number)
        const bit = grouped ? (groupOf[place] as number) : place
        const word = offset + (bit >>> 5)
        const held = seen[word] as number
        if (held & (1 << (bit & 31)) || !isWanted(wanted, place)) continue
        seen[word] = held | (1 << (bit & 31))
        if (grouped || groups.marks.mark(span.groupsBefore + (groupOf[place] as number))) total++
      }
    })
  }
  const orNode = (span: WindowSpan, bits: Int32Array, words: number, node: number, offset: number) => {
    const grouped = byGroup(span)
    const wanted = grouped ? span.wantedGroups : span.wanted
    const base = node * words
    for (let word = 0; word < words; word++) {
      let fresh = (bits[base + word] as number) & ~(seen[offset + word] as number)
      if (wanted) fresh &= wanted[word] as number
      if (fresh === 0) continue
      seen[offset + word] = (seen[offset + word] as number) | fresh
      if (grouped) total += bitCount(fresh)
      else
        for (; fresh !== 0; fresh &= fresh - 1) {
          const place = word * 32 + 31 - Math.clz32(fresh & -fresh)
          if (groups.marks.mark(span.groupsBefore + (span.groupOf[place] as number))) total++
        }
    }
  }
  const orHours = (owner: number, fromHour: number, toHour: number) => {
    const span = spans[owner] as WindowSpan
    const { firstHour, hours, words, bits } = hoursOf(span)
    const offset = offsets[owner] as number
    let lo = Math.max(fromHour, firstHour) - firstHour + hours
    let hi = Math.min(toHour, firstHour + hours) - firstHour + hours
    for (; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) orNode(span, bits, words, lo++, offset)
      if (hi & 1) orNode(span, bits, words, --hi, offset)
    }
  }
  walk(first, wholeFrom)
  let walkEnd = total >= page ? wholeFrom : undefined
  // Only the hours some publisher holds starts in: a window may reach from the epoch to years ahead.
  const held = spans.map(hoursOf).filter((hours) => hours.hours > 0)
  const fromHour = Math.max(wholeFrom / HOUR_S, Math.min(...held.map((hours) => hours.firstHour)))
  const toHour = Math.min(wholeTo / HOUR_S, Math.max(...held.map((hours) => hours.firstHour + hours.hours)))
  // In runs of hours that double (1, 2, 4...) until the page's groups are met, then each publisher's
  // remaining hours at once: a page met in its first hours ends the walk there, and one met late, or never
  // (an offset past the total, a window with no end), costs a few runs, not one per hour of the window.
  let hour = fromHour
  for (let run = 1; walkEnd === undefined && hour < toHour; run *= 2) {
    const next = Math.min(hour + run, toHour)
    for (let owner = 0; owner < spans.length; owner++) orHours(owner, hour, next)
    hour = next
    if (total >= page) walkEnd = hour * HOUR_S
  }
  for (let owner = 0; owner < spans.length; owner++) orHours(owner, hour, toHour)
  walk(wholeTo, end)
  return { total, walkEnd: walkEnd ?? end }
}

/** The groups a walk met, in the order met (each publisher's by next start): their span, group place and next. */
export interface GroupsMet {
  owners: number[]
  places: number[]
  nexts: number[]
}

/**
 * Walks the wanted slots from second `first` up to `walkEnd` (excluded), publisher by publisher, in start
 * order: a group's first slot met is its next start. `marks` is begun here, with room for `span` groups.
 */
export function groupsMet(
  spans: readonly WindowSpan[],
  first: number,
  walkEnd: number,
  groups: { marks: RoundMarks; span: number },
): GroupsMet {
  const met: GroupsMet = { owners: [], places: [], nexts: [] }
  groups.marks.begin(groups.span)
  spans.forEach(({ packed, groupOf, groupsBefore, wanted }, owner) => {
    const hi = packedFrom(packed, walkEnd)
    for (let at = packedFrom(packed, first); at < hi; at++) {
      const value = packed[at] as number
      const place = placeUnpacked(value)
      if (!isWanted(wanted, place)) continue
      const group = groupOf[place] as number
      if (!groups.marks.mark(groupsBefore + group)) continue
      met.nexts.push(secondUnpacked(value) * 1000)
      met.owners.push(owner)
      met.places.push(group)
    }
  })
  return met
}

/** How many slots `groupsMet` would read. */
export function slotsToWalk(spans: readonly WindowSpan[], first: number, walkEnd: number): number {
  return spans.reduce((sum, { packed }) => sum + packedFrom(packed, walkEnd) - packedFrom(packed, first), 0)
}
