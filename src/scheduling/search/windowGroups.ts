import type { Steps } from '../../workInSlices.js'
import { bitCount, hasBit } from './listGroups.js'
import type { RunMarks } from './roundMarks.js'
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
 * only in the part-hours at its edges and in the hours its page's groups are first met in. The hours are
 * the leaves of a segment tree (`bits`, node `n` at `n * words`: hour `h` at node `hours + h`, node `n` the
 * union of nodes `2n` and `2n + 1`), so that any run of hours is the union of at most two nodes a level: a
 * month's window ors ~20 sets, not 720.
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

/** A window's edges: its part-hours are walked, the whole hours between (that some publisher holds) are read. */
interface WindowHours {
  /** Head [first, wholeFrom), whole hours [wholeFrom, wholeTo), tail [wholeTo, end), in seconds. */
  wholeFrom: number
  wholeTo: number
  /** The whole hours some publisher holds starts in: a window may reach from the epoch to years ahead. */
  fromHour: number
  toHour: number
}

const byGroup = (span: WindowSpan) => !span.wanted || span.wantedGroups !== undefined
const hoursOf = (span: WindowSpan) => (byGroup(span) ? span.groupHours : span.seriesHours)

function windowHours(spans: readonly WindowSpan[], first: number, end: number): WindowHours {
  const wholeFrom = Math.min(Math.ceil(first / HOUR_S) * HOUR_S, end)
  const wholeTo = Math.max(wholeFrom, Math.floor(end / HOUR_S) * HOUR_S)
  const held = spans.map(hoursOf).filter((hours) => hours.hours > 0)
  return {
    wholeFrom,
    wholeTo,
    fromHour: Math.max(wholeFrom / HOUR_S, Math.min(...held.map((hours) => hours.firstHour))),
    toHour: Math.min(wholeTo / HOUR_S, Math.max(...held.map((hours) => hours.firstHour + hours.hours))),
  }
}

/**
 * Calls `node` with each node of the publisher's hours' tree that together cover hours `fromHour` up to
 * `toHour`: at most two a level.
 */
function eachNode(hours: HourBits, fromHour: number, toHour: number, node: (node: number) => void): void {
  let lo = Math.max(fromHour, hours.firstHour) - hours.firstHour + hours.hours
  let hi = Math.min(toHour, hours.firstHour + hours.hours) - hours.firstHour + hours.hours
  for (; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) node(lo++)
    if (hi & 1) node(--hi)
  }
}

/** The room a window search marks groups in: met before its page, or in a run of hours being read. */
export interface WindowMarks {
  marks: RunMarks
  /** How many groups its publishers hold together. */
  span: number
}

/** The groups a walk met, in the order met (each publisher's by next start): their span, group place and next. */
export interface GroupsMet {
  owners: number[]
  places: number[]
  nexts: number[]
}

/**
 * Where in seconds `first` up to `end` (excluded) a page of groups by next start lies (`page.offset` on, up
 * to `page.end`): the stretch from `from` to `to` in which a walk meets its groups in start order
 * (`groupsMet`), after the `before` groups met before it. A group's next start before `from` is before every
 * one after, so the page is the `offset - before`th on of those the walk meets. Both edges are hours, found
 * from the hours' bitsets in runs that double (1, 2, 4...) and, past the page's first group, halve again: a
 * deep page (groups met over hours before it) walks only the hour or two its groups are met in, where
 * walking every slot before it was most of its search, and a window's few runs are read, not its every hour.
 * How many groups the window holds is read after (`total`), from where the stretch ends.
 */
export function pageStretch(
  spans: readonly WindowSpan[],
  first: number,
  end: number,
  page: { offset: number; end: number },
  marks: WindowMarks,
): WindowMeeting {
  const hours = windowHours(spans, first, end)
  const { wholeFrom, wholeTo, fromHour, toHour } = hours
  // A first page begins at `first`: no run is dropped.
  const stretch = new WindowMeeting(spans, marks, hours, end, page.offset > 0)
  stretch.walk(first, wholeFrom)
  // The head's groups are before the page, or the stretch's first.
  let hour = fromHour
  if (page.offset > 0 && stretch.count <= page.offset) {
    stretch.keep()
    for (let run = 1; hour < toHour;) {
      const next = Math.min(hour + run, toHour)
      stretch.clear()
      stretch.hours(hour, next)
      if (stretch.before + stretch.count <= page.offset) {
        stretch.keep()
        hour = next
        run *= 2
      } else if (next - hour === 1) break
      else run = (next - hour) >> 1
    }
    stretch.clear()
    stretch.beginsAt(hour < toHour ? hour * HOUR_S : wholeTo)
  } else stretch.beginsAt(first)
  const reached = () => stretch.before + stretch.count >= page.end
  for (let run = 1; !reached() && hour < toHour; run *= 2) {
    const next = Math.min(hour + run, toHour)
    stretch.hours(hour, next)
    hour = next
  }
  if (reached()) stretch.endsAt(hour > fromHour ? hour * HOUR_S : wholeFrom, hour, false)
  else {
    stretch.walk(wholeTo, end)
    stretch.endsAt(end, hour, true)
  }
  return stretch
}

/**
 * The groups a window search meets (a number each after its publisher's before), run by run: a part-hour's
 * slots walked, or whole hours read from their bits. A publisher read by its groups' bits counts them a word
 * at a time; one read by its series' bits marks each wanted series' group (kept for the runs kept, see
 * `RunMarks`). Until the page's stretch begins, a run's groups are counted (`count`) without being taken as
 * met until it is kept (`keep`), so that a run that goes past where the page begins can be dropped (`clear`)
 * and a shorter one tried; the bits read are put back the same way, so that none is read twice. Once the
 * stretch is found (`pageStretch`), its groups are met in start order (`groupsMet`).
 */
class WindowMeeting {
  /** The page's stretch, in seconds: the groups before `from` are kept as met. */
  from = 0
  to = 0
  /** The bits read before the stretch (none: undefined). */
  #seenBefore: Int32Array | undefined
  /** How far the stretch's runs read: whole hours up to `#hoursRead`, and the tail or not. */
  #hoursRead = 0
  #tailRead = false
  /** Groups met in the runs kept; groups met in the run being read. */
  before = 0
  count = 0
  readonly #marks: RunMarks
  readonly #offsets: number[] = []
  /** The bits read, a word per 32 after each publisher's before. */
  readonly #seen: Int32Array
  /**
   * What the run being read changed, until the stretch begins (no run is dropped or kept after): the words of
   * `#seen` and what each held before, to be put back if it is dropped; the groups it met by their series,
   * to be kept as met if it is kept.
   */
  #run: { undo: number[]; fresh: number[] } | undefined

  constructor(
    readonly spans: readonly WindowSpan[],
    marks: WindowMarks,
    readonly window: WindowHours,
    readonly end: number,
    dropsRuns: boolean,
  ) {
    this.#marks = marks.marks
    if (dropsRuns) this.#run = { undo: [], fresh: [] }
    let size = 0
    for (const each of spans) {
      this.#offsets.push(size)
      size += hoursOf(each).words
    }
    this.#seen = new Int32Array(size)
    this.#marks.begin(marks.span)
  }

  /** A new run: the one read dropped. */
  clear(): void {
    const { undo, fresh } = this.#run as { undo: number[]; fresh: number[] }
    for (let at = undo.length - 2; at >= 0; at -= 2) this.#seen[undo[at] as number] = undo[at + 1] as number
    undo.length = 0
    fresh.length = 0
    this.count = 0
    this.#marks.nextRun()
  }

  /** The stretch begins at second `from`, after the runs kept. */
  beginsAt(from: number): void {
    this.from = from
    this.#seenBefore = this.before === 0 ? undefined : this.#seen.slice()
    this.#run = undefined
  }

  /** The stretch ends at second `to`, its runs having read whole hours up to `hoursRead`, and the tail or not. */
  endsAt(to: number, hoursRead: number, tailRead: boolean): void {
    this.to = to
    this.#hoursRead = hoursRead
    this.#tailRead = tailRead
  }

  /** The run's groups taken as met. */
  keep(): void {
    const { undo, fresh } = this.#run as { undo: number[]; fresh: number[] }
    undo.length = 0
    for (const group of fresh) this.#marks.keep(group)
    fresh.length = 0
    this.before += this.count
  }

  /** Meets the groups of the wanted slots from second `from` up to `to` (excluded). */
  walk(from: number, to: number): void {
    this.spans.forEach((span, owner) => {
      const { packed, wanted, groupOf } = span
      const grouped = byGroup(span)
      const offset = this.#offsets[owner] as number
      const hi = packedFrom(packed, to)
      for (let at = packedFrom(packed, from); at < hi; at++) {
        const place = placeUnpacked(packed[at] as number)
        if (!isWanted(wanted, place)) continue
        const bit = grouped ? (groupOf[place] as number) : place
        this.#read(span, grouped, offset, bit >>> 5, 1 << (bit & 31))
      }
    })
  }

  /** Meets the groups of the wanted series holding starts in hours `fromHour` up to `toHour` (excluded). */
  hours(fromHour: number, toHour: number): void {
    this.spans.forEach((span, owner) => {
      const grouped = byGroup(span)
      const wanted = grouped ? span.wantedGroups : span.wanted
      const hours = hoursOf(span)
      const { bits, words } = hours
      const offset = this.#offsets[owner] as number
      eachNode(hours, fromHour, toHour, (node) => {
        const base = node * words
        for (let word = 0; word < words; word++) {
          const set = (bits[base + word] as number) & (wanted ? (wanted[word] as number) : -1)
          if (set !== 0) this.#read(span, grouped, offset, word, set)
        }
      })
    })
  }

  /**
   * Reads bits `set` of the span's word `word` (its groups', or its series' when `grouped` is false): those
   * not read before are now, and their groups are met.
   */
  #read(span: WindowSpan, grouped: boolean, offset: number, word: number, set: number): void {
    const held = this.#seen[offset + word] as number
    let unread = set & ~held
    if (unread === 0) return
    this.#run?.undo.push(offset + word, held)
    this.#seen[offset + word] = held | unread
    if (grouped) {
      this.count += bitCount(unread)
      return
    }
    for (; unread !== 0; unread &= unread - 1) {
      const group =
        span.groupsBefore + (span.groupOf[word * 32 + 31 - Math.clz32(unread & -unread)] as number)
      if (!this.#marks.mark(group)) continue
      this.#run?.fresh.push(group)
      this.count++
    }
  }

  /**
   * Walks the wanted slots of the stretch, publisher by publisher, in start order: a group's first slot met
   * is its next start, unless it was met before the stretch.
   */
  groupsMet(): GroupsMet {
    const found: GroupsMet = { owners: [], places: [], nexts: [] }
    this.spans.forEach((span, owner) => {
      const { packed, groupOf, groupsBefore, wanted } = span
      const grouped = byGroup(span)
      const offset = this.#offsets[owner] as number
      const hi = packedFrom(packed, this.to)
      for (let at = packedFrom(packed, this.from); at < hi; at++) {
        const value = packed[at] as number
        const place = placeUnpacked(value)
        if (!isWanted(wanted, place)) continue
        const group = groupOf[place] as number
        if (grouped && this.#seenBefore && hasBit(this.#seenBefore, offset * 32 + group)) continue
        if (this.#marks.isKept(groupsBefore + group)) continue
        this.#marks.keep(groupsBefore + group)
        found.nexts.push(secondUnpacked(value) * 1000)
        found.owners.push(owner)
        found.places.push(group)
      }
    })
    return found
  }

  /**
   * How many groups the window holds: those met up to the stretch's end, and after it those of the hours
   * and the tail its runs did not read, in the same run.
   */
  total(): number {
    this.hours(this.#hoursRead, this.window.toHour)
    if (!this.#tailRead) this.walk(this.window.wholeTo, this.end)
    return this.before + this.count
  }
}

/** How many slots `groupsMet` would read. */
export function slotsToWalk(spans: readonly WindowSpan[], first: number, walkEnd: number): number {
  return spans.reduce((sum, { packed }) => sum + packedFrom(packed, walkEnd) - packedFrom(packed, first), 0)
}
