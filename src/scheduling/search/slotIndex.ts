import type { Db } from '../../db/open.js'
import {
  countBefore,
  endThrough,
  firstFrom,
  loadStartsSteps,
  nthStart,
  offsetStart,
  type StartsTally,
  tallyThrough,
  packedStartsSteps,
  placeUnpacked,
  secondUnpacked,
  skipAhead,
  startsBegin,
  startsEnd,
  startsByClassSteps,
  startsTogether,
  startsTogetherSteps,
  type SyncStarts,
  unpackedSteps,
} from './startTimes.js'
import { runInSlices, runNow, type Steps } from '../../workInSlices.js'
import { pageInOrder } from './pageOrder.js'
import {
  pageStretch,
  type HourBits,
  hourBitsSteps,
  isWanted,
  packedFrom,
  slotsToWalk,
  type WindowSpan,
} from './windowGroups.js'
import { SLOT_STATUSES, slotIdPrefix } from '../model.js'
import {
  bitCount,
  hasBit,
  setBit,
  byKey,
  type Cursor,
  eachInPageOrder,
  skipBefore,
  type GroupOnPage,
  holdsAt,
  type ListGroups,
  makeListGroups,
  type SlotFigures,
} from './listGroups.js'
import { sized } from './arrays.js'
import { ListedValues, type PublisherValues } from './listedValues.js'
import { RunMarks } from './roundMarks.js'
import {
  filtersNoSeries,
  masksBySync,
  type Series,
  seriesTest,
  listedFiltersAmongTraits,
  soleListFilter,
  classesPassing,
  TRAIT_CLASSES,
  traitClass,
  traitsOf,
  traitsOnlyKey,
  traitsTest,
  type SeriesFilters,
  type SeriesMask,
  type IndexedFilter,
  type GroupDetails,
  SERIES_COLUMNS,
  SeriesMaker,
  type SeriesRow,
  type SyncDetails,
  SERVED_SERIES,
  type Wanted,
  wantedOf,
} from './series.js'

/**
 * Every served series held in memory, indexed by what searches filter on. Series are few (one per schedule
 * and attribute set: tens of thousands nationally) while slots are millions, so a search settles its series
 * here in microseconds and reads only slots from SQLite. Each publisher's series are indexed apart, and
 * reloaded when a sync of it commits or its `enabled` flag changes, by whichever process: every search
 * compares them.
 *
 * A sync writes its slots under a number of its own, its part (`sched_slots.part`, from a counter that never
 * goes back): a search over several publishers merges their parts in start order. The index is the one
 * facade of what search knows beyond the tables: the series, and per part each series' slot starts and the
 * served ones sorted together (startTimes.ts).
 */

const NONE: number[] = []

/** Rows of a publisher's groups or series read at a time while loading it: a millisecond's work or two. */
const LOAD_ROWS = 128
/**
 * Slots a window search may walk per series it would otherwise tally: a slot walked costs a tenth or so of a
 * series tallied (a binary search in its starts).
 */
const WALK_PER_SERIES = 8
/**
 * Slots a window search over a union of lists may walk per series listed (`listedSources`): a slot walked
 * costs ~25 ns (its place unpacked, a byte looked up, its start kept), a series counted two binary searches
 * in its part's starts, about ten times as much. At 16, a long window over every specialty walked ~1,000,000
 * slots (p99 32 ms against 23 counted).
 */
const WALK_PER_SERIES_SOURCED = 8
/**
 * A list whose series hold at least one slot in this many of its publisher's has its starts taken from the
 * publisher's packed starts, in one pass (`listStarts`); a smaller one merges its series' starts.
 */
const LIST_SHARE_WALKED = 8
/** A union of lists holding more than one place in this many is put in place order (`#union`). */
const UNION_IN_ORDER = 8
/**
 * Series wanted by a window search's filters below which they are tallied: a few hundred microseconds' work.
 * At 2,048, a specialty's 2,000 series nationally were tallied from a moment of the caller's own in 2.3-2.6
 * ms, and found by the window's walk in 1.6-2.0.
 */
const WINDOW_MIN_SERIES = 1_024
/** The status every search from now asks for unless told otherwise: its starts are made as a publisher loads. */
const FREE = SLOT_STATUSES.indexOf('free')

/** The filters the index lists series by, in the order a search considers them for its candidates. */
const INDEXED_FILTERS: readonly IndexedFilter[] = [
  'state',
  'city',
  'npi',
  'serviceTypeCode',
  'specialty',
  'appointmentType',
  'groupKey',
]
/**
 * The indexed filters a search drops when their values name every series (`withoutWholeFilters`): each is a
 * search parameter of its own name (group keys are not: their values name one group each).
 */
const WHOLE_FILTERS = INDEXED_FILTERS.filter(
  (filter): filter is Exclude<IndexedFilter, 'groupKey'> => filter !== 'groupKey',
)

/**
 * One publisher's served series as of its last sync, indexed by what searches filter on. A series is known
 * by its place in `all`: the lists by filter value hold places, and what a search reads of every candidate
 * (which statuses it holds, its count and first start per status) is packed by place, so that testing
 * thousands of series reads a few arrays in order instead of an object each, scattered in the heap (each
 * a cache miss: a tenth of a microsecond a series).
 */
class PublisherSeries {
  readonly all: Series[] = []
  /** Per place: its series' traits (series.ts) and its group's place (GroupDetails). */
  readonly traits: number[] = []
  readonly groupPlaces: number[] = []
  /** Per place: its series' id, read for thousands of series a search without reaching each series. */
  readonly ids: number[] = []
  /** Per group place: its key, and (`keyRanks`, once ranked) its place in the order of the keys. */
  readonly groupKeys: string[] = []
  #keyRanks: Int32Array | undefined
  /** Per place, SLOT_STATUSES.length each: slots per status, and the first one's start (+Infinity: none). */
  readonly counts: number[] = []
  readonly firsts: number[] = []
  /** Slots of every status its series hold: the size of a search over all of them. */
  slots = 0
  /** Per status, in SLOT_STATUSES order: slots of it its series hold. */
  readonly statusSlots = SLOT_STATUSES.map(() => 0)
  readonly byState = new Map<string, number[]>()
  readonly byCity = new Map<string, number[]>()
  readonly byAppointmentType = new Map<string, number[]>()
  readonly byNpi = new Map<string, number[]>()
  readonly byServiceCode = new Map<string, number[]>()
  readonly bySpecialtyCode = new Map<string, number[]>()
  readonly bySpecialtyToken = new Map<string, number[]>()
  readonly byGroupKey = new Map<string, number[]>()

  #members: SeriesMask[] | undefined
  /**
   * Per status: its series' slot starts, free slots' read as the publisher loads, the others' by the first
   * search that needs them (see startTimes.ts).
   */
  readonly #starts: (SyncStarts | undefined)[] = []
  /**
   * Per status and trait filters (`traitsOnlyKey`), a bit per place of the series holding slots of it that
   * meet them (and per group, when they are whole groups), made by the first search asking: what a window
   * search by traits alone wants.
   */
  readonly #traitMasks = new Map<string, WantedPlaces>()
  /** Per status and trait filters: the series meeting them as a page's source (`traitSource`). */
  readonly #traitSources = new Map<string, RunSource | null>()
  /** Per place, its series' trait class (`traitClass`), made with the first starts by class. */
  #classes: Uint8Array | undefined
  /** Per status, made with `#servedStarts` (or by the first search by traits alone): its starts by trait class. */
  readonly #classStarts: (Float64Array[] | undefined)[] = []
  /** A mark per place, all clear between searches, and room for every place: what a union of lists is taken with. */
  #marks: Uint8Array | undefined
  #gathered: Int32Array | undefined
  /** Per status: every served series' starts in one ascending array, made by the first search that asks. */
  readonly #servedStarts: (Float64Array | undefined)[] = []
  /**
   * Per status, made with `#servedStarts`: the same starts packed with their series' places (PLACES_PACKED),
   * what a grouped search in a window walks; null when they cannot be packed (a start not in whole seconds).
   */
  readonly #packedStarts: (Float64Array | null | undefined)[] = []
  /** Per status, made from `#packedStarts`: per hour, which groups and series hold a start in it (null: not made). */
  readonly #hourBits: ({ groupHours: HourBits; seriesHours: HourBits } | null | undefined)[] = []
  /** Per place and status (as `counts`): its figures from the last moment a search asked (`from`). */
  #from: SlotsFrom | undefined
  /** Per list asked for by a grouped search, and per status from a moment and at any time: its groups. */
  readonly #listGroups = new WeakMap<readonly number[], (ListGroups | undefined)[]>()
  /** Per list a deep page over it alone asked for, per status: its series' starts together (`listStarts`). */
  readonly #listStarts = new WeakMap<readonly number[], (Float64Array | undefined)[]>()
  readonly #listMembers = new WeakMap<readonly number[], SeriesMask | null>()
  #allPlaces: number[] | undefined
  /** Its series' lowest and highest id (`#idRange`). */
  #idSpan: { lo: number; hi: number } | undefined
  /** The filters a series of it is listed under two values of (a specialty's code and token aside). */
  readonly #manyValued = new Set<IndexedFilter>()

  /** `groups`: how many groups its series are in, at most: their places are below it. */
  constructor(
    readonly part: number,
    readonly groups: number,
  ) {}

  /**
   * Per group place, its place in the order of its publisher's group keys: a list's groups are then put in
   * page order by numbers alone (comparing the keys themselves, each a string elsewhere in memory, was most
   * of making a national list's groups). Made as the publisher loads.
   */
  keyRanks(): Int32Array {
    if (!this.#keyRanks) {
      const ranks = new Int32Array(this.groups)
      const keys = this.groupKeys
      const places = [...keys.keys()].filter((place) => keys[place] !== undefined)
      places.sort((a, b) => byKey(keys[a] as string, keys[b] as string))
      places.forEach((place, rank) => {
        ranks[place] = rank
      })
      this.#keyRanks = ranks
    }
    return this.#keyRanks
  }

  /** All its series as members, made on first use: what every unfiltered search merges. */
  members(): SeriesMask[] {
    this.#members ??= masksBySync(this.all)
    return this.#members
  }

  starts(db: Db, status: number): SyncStarts {
    // Asked per series by searches over thousands: a generator run for starts already made cost more than
    // the binary searches it fed.
    return this.#starts[status] ?? runNow(this.startsSteps(db, status))
  }

  /** `starts` in steps (workInSlices.ts). */
  *startsSteps(db: Db, status: number): Steps<SyncStarts> {
    let starts = this.#starts[status]
    if (!starts) {
      const [served] = this.members()
      starts = served
        ? yield* loadStartsSteps(db, served, status)
        : { lo: 0, at: new Int32Array(0), starts: new Float64Array(0) }
      this.#starts[status] = starts
    }
    return starts
  }

  /** Its served series' starts of the status together, ascending: made once, a few ms for a national publisher. */
  servedStarts(db: Db, status: number): Float64Array {
    // Asked per publisher by every window search and page over every series: no generator once made.
    return this.#servedStarts[status] ?? runNow(this.servedStartsSteps(db, status))
  }

  /** `servedStarts` in steps (workInSlices.ts), and the same starts packed with their groups' places. */
  *servedStartsSteps(db: Db, status: number): Steps<Float64Array> {
    let sorted = this.#servedStarts[status]
    if (!sorted) {
      const starts = yield* this.startsSteps(db, status)
      const packed = yield* packedStartsSteps(starts, this.ids, (place) => place)
      // Sorted once: the packed starts are in the order of the starts.
      sorted = packed ? yield* unpackedSteps(packed) : yield* startsTogetherSteps(starts, this.ids)
      const groupPlaces = this.groupPlaces
      const groupHours = packed
        ? yield* hourBitsSteps(packed, this.groups, (place) => groupPlaces[place] as number)
        : undefined
      const seriesHours = packed ? yield* hourBitsSteps(packed, this.all.length, (place) => place) : undefined
      if (packed)
        this.#classStarts[status] = yield* startsByClassSteps(packed, this.#traitClasses(), TRAIT_CLASSES)
      this.#packedStarts[status] = packed ?? null
      this.#hourBits[status] = groupHours && seriesHours ? { groupHours, seriesHours } : null
      this.#servedStarts[status] = sorted
    }
    return sorted
  }

  /**
   * Its served starts of the status packed with their series' places, and their hours' groups and series, once made
   * (`servedStartsSteps`); null when they could not be.
   */
  windowStarts(status: number): { packed: Float64Array; groupHours: HourBits; seriesHours: HourBits } | null {
    const packed = this.#packedStarts[status]
    const hours = this.#hourBits[status]
    return packed && hours ? { packed, ...hours } : null
  }

  /**
   * Its served slots of the status starting from `from` through `through` (undefined: unbounded): two
   * binary searches in its served starts.
   */
  servedWithin(db: Db, status: number, from: number | undefined, through: number | undefined): number {
    const sorted = this.servedStarts(db, status)
    const first = from === undefined ? 0 : countBefore(sorted, from)
    const end = through === undefined ? sorted.length : countBefore(sorted, through + 1)
    return Math.max(0, end - first)
  }

  /**
   * The slots of the series at `place` of the status from `moment` on: how many, and the first one's start
   * (+Infinity: none). What was found last is kept with the start before it, and answers every moment up to
   * that first start: as time passes, a search from now finds most series' figures kept, read in order,
   * where a binary search in each one's starts reads memory in a few scattered places (a third of a
   * microsecond a series).
   */
  slotsFrom(db: Db, place: number, status: number, moment: number, into: SlotFigures) {
    const statuses = SLOT_STATUSES.length
    const slot = place * statuses + status
    this.#from ??= {
      counts: Float64Array.from(this.counts),
      firsts: Float64Array.from(this.firsts),
      befores: new Float64Array(this.counts.length).fill(Number.NEGATIVE_INFINITY),
    }
    const { counts, firsts, befores } = this.#from
    if (!((befores[slot] as number) < moment && moment <= (firsts[slot] as number))) {
      const sync = this.starts(db, status)
      const id = this.ids[place] as number
      const lo = startsBegin(sync, id)
      const hi = startsEnd(sync, id)
      const from = countBefore(sync.starts, moment, lo, hi)
      counts[slot] = hi - from
      firsts[slot] = from < hi ? (sync.starts[from] as number) : Number.POSITIVE_INFINITY
      befores[slot] = from > lo ? (sync.starts[from - 1] as number) : Number.NEGATIVE_INFINITY
    }
    into.count = counts[slot] as number
    into.first = firsts[slot] as number
    into.before = befores[slot] as number
  }

  /**
   * The groups the list holds slots of the status in from `moment` on (undefined: at any time), kept while
   * they hold (listGroups.ts). `list` is one of this publisher's lists, or `allPlaces()`.
   */
  listGroups(db: Db, list: readonly number[], status: number, moment: number | undefined): ListGroups {
    const kept = keptFor(this.#listGroups, list)
    // At any time and from a moment apart: the first never changes while the publisher is served.
    const slot = status * 2 + (moment === undefined ? 1 : 0)
    let groups = kept[slot]
    if (groups && (moment === undefined || holdsAt(groups, moment))) return groups
    const statuses = SLOT_STATUSES.length
    groups = makeListGroups(list, {
      groups: this.groups,
      figures: (place, into) => {
        if (moment !== undefined) return this.slotsFrom(db, place, status, moment, into)
        into.count = this.counts[place * statuses + status] as number
        into.first = this.firsts[place * statuses + status] as number
        into.before = Number.NEGATIVE_INFINITY
      },
      groupOf: (place) => this.groupPlaces[place] as number,
      keys: this.groupKeys,
      keyRanks: this.keyRanks(),
    })
    kept[slot] = groups
    return groups
  }

  /** Every place, as one list: what a grouped search over every series takes its groups from. */
  allPlaces(): readonly number[] {
    this.#allPlaces ??= this.all.map((_, place) => place)
    return this.#allPlaces
  }

  /**
   * The starts of the status of the list's series together, ascending (8 bytes a slot), made by the first
   * deep page over that list alone: where its page begins is then a binary search, not a sum by hour.
   */
  listStarts(db: Db, list: readonly number[], status: number): Float64Array {
    const kept = keptFor(this.#listStarts, list)
    let together = kept[status]
    if (!together) {
      const statuses = SLOT_STATUSES.length
      let slots = 0
      for (const place of list) slots += this.counts[place * statuses + status] as number
      const packed = this.#packedStarts[status]
      if (packed && slots * LIST_SHARE_WALKED >= packed.length) {
        // A list of a large share of its slots (a state's, in the publisher mostly in that state): one pass
        // over the served starts packed with their places costs less than merging its series' starts.
        together = startsOfMarked(packed, this.#marked([list]), 0, packed.length, slots)
      } else
        together = startsTogether(
          this.starts(db, status),
          list.map((place) => this.ids[place] as number),
        )
      kept[status] = together
    }
    return together
  }

  /**
   * The series of several of its lists (a union) that pass `test` (undefined: all) as a page's source in a
   * window, from its served starts packed with their places (made: `windowStarts`; `slots` of them from
   * `lo` on): the starts (ms) of the union's series met there and their members; null when it has none.
   */
  windowSource(
    slug: string,
    lists: readonly (readonly number[])[],
    test: ((place: number) => boolean) | undefined,
    status: number,
    lo: number,
    slots: number,
  ): RunSource | null {
    const packed = this.#packedStarts[status] as Float64Array
    const bytes = this.#memberBytes()
    const marked = this.#marked(lists, test, bytes)
    const members = this.#membersIn(bytes, slug)
    if (!members) return null
    return {
      prefix: slotIdPrefix(slug),
      members,
      starts: [startsOfMarked(packed, marked, lo, lo + slots, slots)],
    }
  }

  /** One of its lists as a page's source (`pageRunsOf`): its series' starts together and their members. */
  listSource(db: Db, slug: string, list: readonly number[], status: number): RunSource | null {
    let members = this.#listMembers.get(list)
    if (members === undefined) {
      const bytes = this.#memberBytes()
      this.#marked([list], undefined, bytes)
      members = this.#membersIn(bytes, slug) ?? null
      this.#listMembers.set(list, members)
    }
    return members && { prefix: slotIdPrefix(slug), members, starts: [this.listStarts(db, list, status)] }
  }

  /**
   * Its lists (a value's each) as a page's source, their series that pass `test` (the search's other
   * filters; undefined: all) as members: each list's starts (`listStarts`, kept), less the series listed
   * again or failing the test, once for each time listed; null when none is left, undefined when more are
   * taken off than left (a tally of the members costs less then). Merging the lists' starts into one would
   * be a pass over every slot they hold, and even merging the starts taken off (a few hundred series
   * nationally) cost more than a search.
   */
  listsSource(
    db: Db,
    slug: string,
    lists: readonly (readonly number[])[],
    status: number,
    test: ((place: number) => boolean) | undefined,
  ): RunSource | null | undefined {
    const sync = this.starts(db, status)
    const { ids } = this
    const { lo } = this.#idRange()
    const members = this.#memberBytes()
    const ranges: number[] = []
    let left = 0
    for (const list of lists) {
      for (const place of list) {
        const id = ids[place] as number
        if (members[id - lo] === 0 && (!test || test(place))) {
          members[id - lo] = 1
          left++
          continue
        }
        const from = startsBegin(sync, id)
        const to = startsEnd(sync, id)
        if (from < to) ranges.push(from, to)
      }
    }
    if (left === 0) return null
    if (ranges.length / 2 > left) return undefined
    const starts = lists.map((list) => this.listStarts(db, list, status))
    if (starts.every((each) => each.length === 0)) return null
    return {
      prefix: slotIdPrefix(slug),
      members: this.#membersIn(members, slug) as SeriesMask,
      starts,
      less: ranges.length > 0 ? { starts: sync.starts, ranges } : undefined,
    }
  }

  /** The lowest and highest id of its series. */
  #idRange(): { lo: number; hi: number } {
    if (!this.#idSpan) {
      let lo = Number.POSITIVE_INFINITY
      let hi = Number.NEGATIVE_INFINITY
      for (const id of this.ids) {
        if (id < lo) lo = id
        if (id > hi) hi = id
      }
      this.#idSpan = { lo, hi }
    }
    return this.#idSpan
  }

  /**
   * A mark per place of the lists' series that pass `test` (undefined: all); the same marks by id, from its
   * lowest (`#idRange`), in `members` when given.
   */
  #marked(
    lists: readonly (readonly number[])[],
    test?: (place: number) => boolean,
    members?: Buffer,
  ): Uint8Array {
    const marked = new Uint8Array(this.all.length)
    const { ids } = this
    const lo = this.#idRange().lo
    for (const list of lists)
      for (const place of list) {
        if (test && !test(place)) continue
        marked[place] = 1
        if (members) members[(ids[place] as number) - lo] = 1
      }
    return marked
  }

  /**
   * A byte per id over its whole id range (`#idRange`), for a search to mark its members in as it finds them
   * (`#membersIn`): gathering them by id after marking them by place was two passes over every place of each
   * publisher a page read, and a page's runs read no more rows for the wider range (it only bounds a test of
   * the rows at one start).
   */
  #memberBytes(): Buffer {
    const { lo, hi } = this.#idRange()
    return Buffer.alloc(hi - lo + 1)
  }

  /** Bytes of `#memberBytes` as members of its part; undefined when none is marked. */
  #membersIn(bytes: Buffer, slug: string): SeriesMask | undefined {
    if (!bytes.includes(1)) return undefined
    const { lo, hi } = this.#idRange()
    return { part: this.part, publisher: slug, lo, hi, members: bytes }
  }

  /**
   * The slots of the series at `place` of the status from `from` through `through` (both included;
   * undefined: unbounded): how many, and the first one's start (+Infinity: none).
   */
  slotsWithin(
    db: Db,
    place: number,
    status: number,
    from: number | undefined,
    through: number | undefined,
    into: SlotFigures,
  ) {
    const slot = place * SLOT_STATUSES.length + status
    const first = this.firsts[slot] as number
    if (through === undefined && (from === undefined || first >= from)) {
      into.count = this.counts[slot] as number
      into.first = first
    } else if (through === undefined) this.slotsFrom(db, place, status, from as number, into)
    else {
      const sync = this.starts(db, status)
      const id = this.ids[place] as number
      const lo = startsBegin(sync, id)
      const hi = startsEnd(sync, id)
      const begin = firstFrom(sync.starts, from, lo, hi)
      // Over a short window most series have none: the first start from `from` already says so.
      if (begin === hi || (sync.starts[begin] as number) > through) {
        into.count = 0
        into.first = Number.POSITIVE_INFINITY
        return
      }
      into.count = endThrough(sync.starts, through, begin + 1, hi) - begin
      into.first = sync.starts[begin] as number
    }
  }

  add(series: Series) {
    const place = this.all.length
    this.all.push(series)
    this.traits.push(traitsOf(series))
    this.groupPlaces.push(series.group.place)
    this.ids.push(series.id)
    this.groupKeys[series.group.place] = series.groupKey
    series.counts.forEach((count, status) => {
      this.counts.push(count)
      this.firsts.push(series.firsts[status] as number)
      this.slots += count
      this.statusSlots[status] = (this.statusSlots[status] as number) + count
    })
    if (series.state) push(this.byState, series.state, place)
    if (series.city) push(this.byCity, series.city, place)
    if (series.appointmentType) push(this.byAppointmentType, series.appointmentType, place)
    for (const npi of series.npis) push(this.byNpi, npi, place)
    for (const code of series.serviceCodes) push(this.byServiceCode, code, place)
    for (const code of series.specialtyCodes) push(this.bySpecialtyCode, code, place)
    for (const token of series.specialtyTokens) push(this.bySpecialtyToken, token, place)
    push(this.byGroupKey, series.groupKey, place)
    if (series.npis.size > 1) this.#manyValued.add('npi')
    if (series.serviceCodes.size > 1) this.#manyValued.add('serviceTypeCode')
    if (series.specialtyCodes.size > 1) this.#manyValued.add('specialty')
  }

  /**
   * The smallest list of places that surely holds every match, each once: the most selective indexed
   * filter's, named as `met` (its condition need not be checked again), or undefined for every series.
   */
  candidates(wanted: Wanted): { list?: ArrayLike<number>; met?: IndexedFilter } {
    const fewest = this.fewestListed(INDEXED_FILTERS, wanted)
    // A union's size is at most the sum of its lists': one that cannot be smaller than every series is not
    // made, unless it stands in for testing every series on the filter's values (100 specialties, some
    // listed in every series: the union marks each series once or twice).
    if (!fewest) return {}
    if (fewest.places === 0) return { list: NONE, met: fewest.filter }
    if (fewest.places >= this.all.length * fewest.lists.length) return {}
    return { list: this.#union(fewest.lists), met: fewest.filter }
  }

  /**
   * Of these filters, the one whose lists of the values asked hold the fewest places (summed: their union
   * holds at most as many), with those lists (the empty ones left out); undefined when none is asked. Only
   * its lists are then made into a union: the union of 100 service types' lists cost a search more than
   * everything else when a specialty's list was smaller.
   */
  fewestListed(
    filters: readonly IndexedFilter[],
    wanted: Wanted,
  ): { filter: IndexedFilter; lists: number[][]; places: number } | undefined {
    let fewest: { filter: IndexedFilter; lists: number[][]; places: number } | undefined
    for (const filter of filters) {
      const asked = this.listsOf(filter, wanted)
      if (!asked) continue
      const lists = asked.filter((list): list is number[] => !!list?.length)
      let places = 0
      for (const list of lists) places += list.length
      if (!fewest || places < fewest.places) fewest = { filter, lists, places }
    }
    return fewest
  }

  /** Whether the filter's values name every one of its series: the filter then excludes none of them. */
  namesEvery(filter: IndexedFilter, wanted: Wanted): boolean {
    const lists = this.listsOf(filter, wanted)
    if (!lists) return false
    let sum = 0
    for (const list of lists) sum += list?.length ?? 0
    if (sum < this.all.length) return false
    // Each place is in one list at most: their sizes say it (marking 60,000 places took most of a search).
    const bothSpecialtyForms = !!wanted.specialtyCodes?.length && !!wanted.specialtyTokens?.length
    if (!this.#manyValued.has(filter) && !bothSpecialtyForms) return sum === this.all.length
    // Counted on the marks `#union` leaves cleared: gathering the union itself cost ten times as much.
    const marks = (this.#marks ??= new Uint8Array(this.all.length))
    let named = 0
    for (const list of lists) {
      for (const place of list ?? NONE) {
        named += 1 - (marks[place] as number)
        marks[place] = 1
      }
    }
    marks.fill(0)
    return named === this.all.length
  }

  /** The lists of places the filter's values name (undefined where a value names none); undefined when not asked. */
  listsOf(filter: IndexedFilter, wanted: Wanted): (number[] | undefined)[] | undefined {
    switch (filter) {
      case 'state':
        return wanted.state === undefined ? undefined : [this.byState.get(wanted.state)]
      case 'city':
        return wanted.city === undefined ? undefined : [this.byCity.get(wanted.city)]
      case 'npi':
        return wanted.npi && lookUp(this.byNpi, wanted.npi)
      case 'serviceTypeCode':
        return wanted.serviceTypeCode && lookUp(this.byServiceCode, wanted.serviceTypeCode)
      case 'specialty':
        if (!wanted.specialtyCodes || !wanted.specialtyTokens) return undefined
        return [
          ...lookUp(this.bySpecialtyCode, wanted.specialtyCodes),
          ...lookUp(this.bySpecialtyToken, wanted.specialtyTokens),
        ]
      case 'appointmentType':
        return wanted.appointmentType === undefined
          ? undefined
          : [this.byAppointmentType.get(wanted.appointmentType)]
      case 'groupKey':
        return wanted.groupKeys[0] === undefined ? undefined : [this.byGroupKey.get(wanted.groupKeys[0])]
    }
  }

  /** Visits every place of the lists once, in the order first listed (a series can be listed under several). */
  eachListed(lists: readonly (readonly number[])[], visit: (place: number) => void): void {
    const [only] = lists
    if (lists.length === 1 && only) {
      for (const place of only) visit(place)
      return
    }
    const marks = (this.#marks ??= new Uint8Array(this.all.length))
    for (const list of lists)
      for (const place of list) {
        if (marks[place] === 1) continue
        marks[place] = 1
        visit(place)
      }
    for (const list of lists) for (const place of list) marks[place] = 0
  }

  /**
   * Every place of the lists once, in the order first listed (a series can be listed under several of the
   * values asked for), until the next union of this publisher's lists. Marked by place (a Set of the places
   * cost 20 us a publisher for two service types) and gathered as met, in room kept for it: sorting them
   * and copying them out cost three times as much as the rest of the union. A union of more than a
   * UNION_IN_ORDER share of the places is gathered again in place order, a scan of the marks: a search
   * reads each series' starts where the series lies, and read out of order, a window's count over
   * 50,000 series took a third longer.
   */
  #union(lists: (number[] | undefined)[]): ArrayLike<number> {
    let only: number[] | undefined
    let listed = 0
    for (const list of lists) {
      if (list === undefined || list.length === 0) continue
      only = list
      listed++
    }
    if (listed <= 1) return only ?? NONE
    const marks = (this.#marks ??= new Uint8Array(this.all.length))
    const gathered = (this.#gathered ??= new Int32Array(this.all.length))
    let count = 0
    for (const list of lists) {
      for (const place of list ?? NONE) {
        if (marks[place] === 0) {
          marks[place] = 1
          gathered[count++] = place
        }
      }
    }
    if (count * UNION_IN_ORDER < marks.length) {
      for (let at = 0; at < count; at++) marks[gathered[at] as number] = 0
      return gathered.subarray(0, count)
    }
    let at = 0
    for (let place = 0; place < marks.length; place++) {
      if (marks[place] === 0) continue
      marks[place] = 0
      gathered[at++] = place
    }
    return gathered.subarray(0, at)
  }

  /**
   * The places whose series hold slots of the status and meet `test` on their traits, kept by `key` (a bit
   * each), and their groups when they are whole groups (as `isVirtual`, a location's, always is).
   */
  traitMask(key: string, status: number, test: ((traits: number) => boolean) | undefined): WantedPlaces {
    const kept = this.#traitMasks.get(`${status} ${key}`)
    if (kept) return kept
    const series = new Int32Array(Math.ceil(this.all.length / 32))
    const groups = new Int32Array(Math.ceil(this.groups / 32))
    // Per group: 1 when a series of it is wanted, 2 when one is not.
    const met = new Uint8Array(this.groups)
    const bit = 1 << status
    this.traits.forEach((traits, place) => {
      if (!(traits & bit)) return
      const group = this.groupPlaces[place] as number
      if (test && !test(traits)) {
        met[group] = (met[group] as number) | 2
        return
      }
      met[group] = (met[group] as number) | 1
      setBit(series, place)
      setBit(groups, group)
    })
    const wanted = { series, groups: met.includes(3) ? undefined : groups }
    this.#traitMasks.set(`${status} ${key}`, wanted)
    return wanted
  }

  /**
   * For a search whose only series filters are traits (`key`, `test`): the series meeting them that hold
   * slots of the status, as a page's source (their members in its part, and the starts of the trait classes
   * they make up: `classStarts`), kept by key and status; null when none does.
   */
  traitSource(
    db: Db,
    slug: string,
    key: string,
    status: number,
    test: (traits: number) => boolean,
  ): RunSource | null {
    const kept = this.#traitSources.get(`${status} ${key}`)
    if (kept !== undefined) return kept
    const bit = 1 << status
    const classes = classesPassing(test)
    const wanted = (traitClass: number) => ((classes >>> traitClass) & 1) === 1
    const classOf = this.#traitClasses()
    const { lo } = this.#idRange()
    const bytes = this.#memberBytes()
    this.traits.forEach((traits, place) => {
      if (traits & bit && wanted(classOf[place] as number)) bytes[(this.ids[place] as number) - lo] = 1
    })
    const members = this.#membersIn(bytes, slug)
    const starts = this.classStarts(db, status).filter(
      (list, traitClass) => list.length > 0 && wanted(traitClass),
    )
    const source = members ? { prefix: slotIdPrefix(slug), members, starts } : null
    this.#traitSources.set(`${status} ${key}`, source)
    return source
  }

  /**
   * Its served starts of the status by trait class (`traitClass`), each ascending: made with its served
   * starts from their packed form, or else, once per status by the first search by traits alone, merged from
   * its series' starts.
   */
  classStarts(db: Db, status: number): Float64Array[] {
    this.servedStarts(db, status)
    let lists = this.#classStarts[status]
    if (!lists) {
      const classes = this.#traitClasses()
      const ids = Array.from({ length: TRAIT_CLASSES }, (): number[] => [])
      classes.forEach((traitClass, place) => (ids[traitClass] as number[]).push(this.ids[place] as number))
      const starts = this.starts(db, status)
      lists = ids.map((list) => startsTogether(starts, list))
      this.#classStarts[status] = lists
    }
    return lists
  }

  #traitClasses(): Uint8Array {
    this.#classes ??= Uint8Array.from(this.traits, traitClass)
    return this.#classes
  }

  /**
   * Whether the series at a place of the candidates meets the filters: first by its trait class, then, for
   * a filter neither its lists nor its traits settle, on the series itself.
   */
  tester({ classes, rest }: FilterTests): (place: number) => boolean {
    const { all } = this
    const classOf = this.#traitClasses()
    return (place) =>
      (classes === undefined || ((classes >>> (classOf[place] as number)) & 1) === 1) &&
      (!rest || rest(all[place] as Series))
  }
}

/** Per place and status: a series' slots from the last moment asked, their first start and the one before. */
interface SlotsFrom {
  counts: Float64Array
  firsts: Float64Array
  befores: Float64Array
}

/** The tests of a search's filters once its candidates are found through `met` (series.ts). */
interface FilterTests {
  /**
   * The trait classes meeting the trait filters, a bit each (`classesPassing`; undefined: none asked): one
   * shift per series where calling the filters' tests on its traits was a third of marking 16,000 listed
   * series.
   */
  classes: number | undefined
  rest: ((series: Series) => boolean) | undefined
}

/** The filters' tests, made once per search and per filter the lists met, not once per publisher. */
function filterTests(wanted: Wanted): (met: IndexedFilter | undefined) => FilterTests {
  const traits = traitsTest(wanted)
  const classes = traits && classesPassing(traits)
  const byMet = new Map<IndexedFilter | undefined, FilterTests>()
  return (met) => {
    let tests = byMet.get(met)
    if (!tests) {
      tests = { classes, rest: seriesTest(wanted, met) }
      byMet.set(met, tests)
    }
    return tests
  }
}

/** Whether any of the publisher's series matches the filters. */
function involves(
  slug: string,
  indexed: PublisherSeries,
  filters: SeriesFilters,
  wanted: Wanted,
  testsFor: (met: IndexedFilter | undefined) => FilterTests,
): boolean {
  if (filters.publisher !== undefined && slug !== filters.publisher) return false
  const { list, met } = indexed.candidates(wanted)
  const test = indexed.tester(testsFor(met))
  if (list === undefined) return indexed.all.some((_, place) => test(place))
  for (let at = 0; at < list.length; at++) if (test(list[at] as number)) return true
  return false
}

/** A run of a page (`SlotIndex.pageRuns`): `take` slots of one part's series at one start, past `skip` of them. */
export interface PageRun {
  members: SeriesMask
  start: number
  skip: number
  take: number
}

/**
 * The starts (ms) of the packed starts from `packed[from]` to `packed[to - 1]` whose place is marked (1;
 * any other place 0), in their order: at most `room` of them.
 */
function startsOfMarked(
  packed: Float64Array,
  marked: Uint8Array,
  from: number,
  to: number,
  room: number,
): Float64Array {
  // Every start is written and kept only where its place is marked (the count moves by the mark): with half
  // the places marked, a branch on the mark was mispredicted every other slot and took twice as long.
  const starts = new Float64Array(room + 1)
  let at = 0
  for (let nth = from; nth < to; nth++) {
    const value = packed[nth] as number
    starts[at] = secondUnpacked(value) * 1000
    at += marked[placeUnpacked(value)] as number
  }
  return starts.subarray(0, at)
}

/** One publisher's share of a page walked by start: its slot id prefix, its series' starts and their members. */
export interface RunSource {
  prefix: string
  members: SeriesMask
  /**
   * The starts of the status of the series the members name, ascending: in one list, or in several whose
   * counts add up (one per value asked), less those of `less`.
   */
  starts: readonly Float64Array[]
  /**
   * The series whose starts `starts` hold and that are not members, or are held again (a series listed
   * under two values asked), once for each such time: their counts are taken off.
   */
  less?: StartRanges
}

/** Series' starts as ranges of one array (their part's), `lo, hi` pairs: from `starts[lo]` to `starts[hi - 1]`. */
export interface StartRanges {
  starts: Float64Array
  ranges: number[]
}

/** How many slots the source holds from `from` through `through` (both included; undefined: unbounded). */
export function sourceSlotsWithin(
  source: RunSource,
  from: number | undefined,
  through: number | undefined,
): number {
  // A window whose end is before its beginning holds none.
  const within = (starts: Float64Array, lo: number, hi: number) =>
    Math.max(0, endThrough(starts, through, lo, hi) - firstFrom(starts, from, lo, hi))
  let slots = 0
  for (const starts of source.starts) slots += within(starts, 0, starts.length)
  const { starts, ranges } = source.less ?? { ranges: [] }
  for (let at = 0; at < ranges.length; at += 2)
    slots -= within(starts as Float64Array, ranges[at] as number, ranges[at + 1] as number)
  return slots
}

/**
 * A source's place in a page's walk from `from`: where it is in each of its lists, and in each range of
 * `less` (found when the walk first passes its starts: a page of the first slots passes a few publishers'
 * of fifty, and a search with a trait takes thousands of series off).
 */
interface SourceCursor {
  source: RunSource
  from: number | undefined
  at: number[]
  lessAt: number[] | undefined
}

/** Where each range of `less` begins from `from` on. */
function lessFrom(less: StartRanges, from: number | undefined): number[] {
  const at: number[] = []
  const { starts, ranges } = less
  for (let nth = 0; nth < ranges.length; nth += 2)
    at.push(firstFrom(starts, from, ranges[nth] as number, ranges[nth + 1] as number))
  return at
}

/** The source's slots from its cursor through `moment`: how many, the cursor moved past them. */
function passThrough(cursor: SourceCursor, moment: number): number {
  const { at } = cursor
  const { starts, less } = cursor.source
  let count = 0
  for (let nth = 0; nth < starts.length; nth++) {
    const list = starts[nth] as Float64Array
    const from = at[nth] as number
    // In a page's walk the list's next start is mostly later than the moment: no search then.
    if (from >= list.length || (list[from] as number) > moment) continue
    at[nth] = endThrough(list, moment, from, list.length)
    count += (at[nth] as number) - from
  }
  if (!less) return count
  const lessAt = (cursor.lessAt ??= lessFrom(less, cursor.from))
  for (let nth = 0; nth < lessAt.length; nth++) {
    const from = lessAt[nth] as number
    const end = less.ranges[2 * nth + 1] as number
    if (from >= end || (less.starts[from] as number) > moment) continue
    lessAt[nth] = endThrough(less.starts, moment, from, end)
    count -= (lessAt[nth] as number) - from
  }
  return count
}

/** Skips left below which a page's walk passes starts one by one: counting them costs more. */
const SKIP_WALKED = 128

/**
 * Moves the cursors past the starts wholly before the `skip`th slot of them all (from 0); returns how many
 * slots they passed. The moment is found by counting each list by binary search (`offsetStart`): a deep
 * page then walks from near its first slot, not start by start from the first. Starts taken off are not
 * counted there (a search per range, each time, would cost more than the walk), so the cursors stop early
 * where some are, and the counting is done again from there while it passes slots.
 */
function passBeforeSkip(cursors: SourceCursor[], skip: number, through: number | undefined): number {
  let passed = 0
  const listed = (moment: number, tally: StartsTally) => {
    for (const { source, at } of cursors)
      source.starts.forEach((list, nth) => tallyThrough(list, at[nth] as number, list.length, moment, tally))
  }
  while (skip - passed >= SKIP_WALKED) {
    const moment = offsetStart(listed, skip - passed, through)
    if (moment === undefined) return passed
    const before = passed
    for (const cursor of cursors) passed += passThrough(cursor, moment - 1)
    if (passed === before) return passed
  }
  return passed
}

/**
 * A page over the sources' slots from `from` through `through` (undefined: unbounded), past their first
 * `skip`, as runs of one publisher's slots at one start, in page order: by start, then by id, and ids
 * begin with their publisher's prefix (`slotIdPrefix`), so a start's slots come publisher by publisher. Each
 * run is then read by one seek in its part; a merge of every publisher's walk seeked in each of them.
 */
export function pageRunsOf(
  sources: readonly RunSource[],
  from: number | undefined,
  through: number | undefined,
  skip: number,
  limit: number,
): PageRun[] {
  const cursors: SourceCursor[] = sources
    .map((source) => ({
      source,
      from,
      at: source.starts.map((starts) => firstFrom(starts, from, 0, starts.length)),
      lessAt: undefined,
    }))
    .sort((a, b) => byKey(a.source.prefix, b.source.prefix))
  let left = limit
  let skipLeft = skip - passBeforeSkip(cursors, skip, through)
  const runs: PageRun[] = []
  while (left > 0) {
    let start = Number.POSITIVE_INFINITY
    for (const {
      source: { starts },
      at,
    } of cursors) {
      for (let nth = 0; nth < starts.length; nth++) {
        const list = starts[nth] as Float64Array
        const next = at[nth] as number
        if (next < list.length) start = Math.min(start, list[next] as number)
      }
    }
    if (start === Number.POSITIVE_INFINITY || (through !== undefined && start > through)) break
    for (const cursor of cursors) {
      if (left === 0) break
      const count = passThrough(cursor, start)
      if (count === 0) continue
      if (skipLeft >= count) {
        skipLeft -= count
        continue
      }
      const take = Math.min(count - skipLeft, left)
      runs.push({ members: cursor.source.members, start, skip: skipLeft, take })
      left -= take
      skipLeft = 0
    }
  }
  return runs
}

/** The series a search wants, a bit per place, and their groups when they are whole groups. */
interface WantedPlaces {
  series: Int32Array
  groups: Int32Array | undefined
}

/**
 * Series found by a search and, in the same order, what searches read of each without looking at it: its
 * count and first start of the asked status, its traits and group.
 */
export interface Found {
  series: Series[]
  counts: number[]
  firsts: number[]
  /** Its slots of the status from `from` on (every one when undefined), and the first one's start. */
  from: number | undefined
  countsFrom: number[]
  firstsFrom: number[]
}

/** The entries of `found` at these indexes, in their order. */
export function foundAt(found: Found, indexes: readonly number[]): Found {
  const pick = <T>(list: T[]) => indexes.map((index) => list[index] as T)
  const { series, counts, firsts, from, countsFrom, firstsFrom } = found
  return {
    series: pick(series),
    counts: pick(counts),
    firsts: pick(firsts),
    from,
    countsFrom: pick(countsFrom),
    firstsFrom: pick(firstsFrom),
  }
}

/** A publisher in a search over one listed filter alone, with the non-empty lists of the values asked. */
interface ListedPublisher {
  slug: string
  indexed: PublisherSeries
  lists: (readonly number[])[]
}

/** A publisher with lists of a search's values, and the test of its other filters on a place (undefined: none). */
interface TestedPublisher extends ListedPublisher {
  test: ((place: number) => boolean) | undefined
}

/** A publisher's values of the filters a search may ask many values of (ListedValues). */
function valuesOf(indexed: PublisherSeries): PublisherValues {
  return {
    serviceTypeCode: indexed.byServiceCode.keys(),
    specialtyCodes: indexed.bySpecialtyCode.keys(),
    specialtyTokens: indexed.bySpecialtyToken.keys(),
  }
}

/** What is kept for a list (by status), made empty on first use. */
function keptFor<T>(
  kept: WeakMap<readonly number[], (T | undefined)[]>,
  list: readonly number[],
): (T | undefined)[] {
  let made = kept.get(list)
  if (!made) {
    made = []
    kept.set(list, made)
  }
  return made
}

/** The lists of an index by these values, in their order (undefined where a value names none). */
function lookUp(index: Map<string, number[]>, keys: string[]): (number[] | undefined)[] {
  return keys.map((key) => index.get(key))
}

/** How many groups the lists' groups are together: each is in one publisher's places. */
function unionSize(lists: readonly ListGroups[]): number {
  const words = (lists[0] as ListGroups).bits.length
  let size = 0
  for (let word = 0; word < words; word++) {
    let union = 0
    for (const { bits } of lists) union |= bits[word] as number
    size += bitCount(union)
  }
  return size
}

function push<T>(map: Map<string, T[]>, key: string, value: T) {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

export class SlotIndex {
  readonly #publishers = new Map<string, PublisherSeries>()
  /** Every served series by id. */
  readonly #byId = new Map<number, Series>()
  /** The served publishers' series, replaced (never changed) when one changes: what an answer was made from. */
  #served: ReadonlyMap<string, PublisherSeries> = new Map()
  #generation = -1
  /** The bringing up to date under way in slices (`ready`), if any. */
  #catchingUp: Promise<void> | undefined
  /**
   * The statuses whose starts every served publisher holds: free, made as each loads, and those a search
   * asked for since the last change (made by `ready` in slices too).
   */
  #startsHeld = new Set([FREE])
  /**
   * What a search found, as publisher and place, before it is copied out at its exact size: kept from one
   * search to the next (searches run one at a time), so that finding allocates nothing.
   */
  readonly #foundIn: PublisherSeries[] = []
  #foundAt = new Int32Array(1024)
  /** How many entries of the scratch lists the last search left for `entrySeries` to read. */
  #entries = 0
  /**
   * The filters and status the entries were found for, while they hold (no publisher changed since): a
   * grouped search that finds too few series for a window's walk tallies them without finding them again.
   */
  #entriesFor: { filters: SeriesFilters; status: number } | undefined
  /**
   * Per NPI, the served publishers whose series name it: a list of NPIs is looked up in those alone (100
   * NPIs looked up in each of 50 publishers were a third of the search).
   */
  readonly #npiPublishers = new Map<string, PublisherSeries[]>()
  readonly #listedValues = new ListedValues()
  /** The last search's wanted values (`#wanted`), and the filters and served publishers they are of. */
  #wantedFor:
    { filters: SeriesFilters; served: ReadonlyMap<string, PublisherSeries>; wanted: Wanted } | undefined
  /** The groups a search in a window met (`groupsInWindow`), by number: kept from one search to the next. */
  readonly #windowMarks = new RunMarks()

  constructor(readonly db: Db) {}

  /**
   * The served series matching every filter that hold slots of `status`, with their count and first start
   * of it, at any time and from `from` on, after bringing changed publishers up to date. A series is looked
   * at only for a filter its publisher's lists did not settle.
   */
  match(filters: SeriesFilters, status: number, from: number | undefined): Found {
    return this.#copyFound(this.#find(filters, status), status, from)
  }

  /**
   * For a grouped search: hands `visit` each served series matching the filters that has slots of the status
   * from `from` through `through` (both included; undefined: unbounded), after bringing changed publishers up
   * to date, with how many, the first one's start, its traits and its group's number in this search (its
   * group's place among its publisher's, after the groups of the publishers met before it). `entry` names
   * the series to `entrySeries` until the next search. Nothing is copied out: tallying ~10,000 series from the
   * arrays of a match cost about as much again as finding them.
   */
  eachMatching(
    filters: SeriesFilters,
    status: number,
    from: number | undefined,
    through: number | undefined,
    visit: (group: number, count: number, first: number, traits: number, entry: number) => void,
  ): void {
    const count = this.#find(filters, status)
    const slots = { count: 0, first: 0, before: 0 }
    let publisher: PublisherSeries | undefined
    let groupsBefore = 0
    let span = 0
    for (let entry = 0; entry < count; entry++) {
      const indexed = this.#foundIn[entry] as PublisherSeries
      if (indexed !== publisher) {
        groupsBefore = span
        span += indexed.groups
        publisher = indexed
      }
      const place = this.#foundAt[entry] as number
      indexed.slotsWithin(this.db, place, status, from, through, slots)
      if (slots.count > 0)
        visit(
          groupsBefore + (indexed.groupPlaces[place] as number),
          slots.count,
          slots.first,
          indexed.traits[place] as number,
          entry,
        )
    }
  }

  /**
   * A grouped search answered from its lists' groups (listGroups.ts): its total and the groups on its page.
   * Undefined unless the filters are one indexed filter alone (a publisher besides) or none, from a moment
   * on: then the lists settle which series match, and a search looks at no series but the page's groups'.
   */
  groupsOfLists(
    filters: SeriesFilters,
    status: number,
    from: number | undefined,
    page: { offset: number; limit: number },
  ): { total: number; groups: GroupOnPage[] } | undefined {
    const listed = this.#listedAlone(filters)
    if (listed === undefined) return undefined
    // The publishers with lists asked for, and the number their groups are counted from in this search.
    interface Owner {
      indexed: PublisherSeries
      groupsBefore: number
    }
    const owners: Owner[] = []
    const cursors: Cursor[] = []
    let total = 0
    let span = 0
    for (const { indexed, lists: own } of listed.publishers) {
      const owner = owners.length
      owners.push({ indexed, groupsBefore: span })
      span += indexed.groups
      const made = own.map((list) => indexed.listGroups(this.db, list, status, from))
      for (const groups of made) cursors.push({ groups, owner, at: 0 })
      total += made.length === 1 ? (made[0] as ListGroups).size : unionSize(made)
    }
    // A page past the last group: merging every group to find none cost tens of milliseconds.
    if (page.offset >= total) return { total, groups: [] }
    const bit = 1 << status
    const matches = listed.every ? undefined : seriesTest(listed.wanted)
    // A mark per group of the search (a Set of them cost a deep page a tenth of its time).
    const seen = new Uint8Array(span)
    const met = (owner: number, place: number) => {
      const group = (owners[owner] as Owner).groupsBefore + place
      const before = seen[group] === 1
      seen[group] = 1
      return before
    }
    const onPage: GroupOnPage[] = []
    const slots = { count: 0, first: 0, before: 0 }
    let rank = skipBefore(cursors, page.offset, met)
    eachInPageOrder(cursors, page.offset + page.limit - rank, met, (owner, _place, next, key) => {
      if (rank++ < page.offset) return
      const { indexed } = owners[owner] as Owner
      const found: GroupOnPage = { key, next, count: 0, traits: 0, series: [] }
      for (const place of indexed.byGroupKey.get(key) ?? NONE) {
        const series = indexed.all[place] as Series
        const traits = indexed.traits[place] as number
        if (!(traits & bit) || (matches && !matches(series))) continue
        indexed.slotsWithin(this.db, place, status, from, undefined, slots)
        if (slots.count === 0) continue
        found.count += slots.count
        found.traits |= traits
        found.series.push(series)
      }
      onPage.push(found)
    })
    return { total, groups: onPage }
  }

  /**
   * A grouped search in a window, answered from each publisher's starts packed with their series' places
   * (windowGroups.ts): the total from the hours' series, the page by walking the window's slots in start
   * order only over the hours its groups are first met in (a group's first slot met is its next start; the
   * groups met in the hours before are counted from the hours' bits), and only the page's groups' series
   * are looked at. The series a filter wants are found first, as a tally would, when it
   * wants more than WINDOW_MIN_SERIES (fewer are tallied at once). Undefined when they are fewer, when the
   * walk would read more than WALK_PER_SERIES slots a series (tallying the series then reads less), or when
   * a publisher's starts are not packed (not whole seconds). `through` undefined: no end (every hour held
   * from `from` on).
   */
  groupsInWindow(
    filters: SeriesFilters,
    status: number,
    from: number | undefined,
    through: number | undefined,
    page: { offset: number; limit: number },
  ): { total: number; groups: GroupOnPage[] } | undefined {
    const wanted = this.#wantedSeries(filters, status)
    if (wanted === undefined) return undefined
    // Seconds, the end excluded: a start in whole seconds is in the window when its second is.
    const first = from === undefined ? 0 : Math.ceil(from / 1000)
    const end = through === undefined ? Number.POSITIVE_INFINITY : Math.floor(through / 1000) + 1
    const owners: PublisherSeries[] = []
    const spans: WindowSpan[] = []
    let groups = 0
    for (const [, indexed] of this.#searched(filters)) {
      const mask = wanted.masks?.get(indexed)
      if (wanted.masks && !mask) continue
      indexed.servedStarts(this.db, status)
      const starts = indexed.windowStarts(status)
      if (!starts) return undefined
      const { packed, groupHours, seriesHours } = starts
      owners.push(indexed)
      spans.push({
        packed,
        groupHours,
        seriesHours,
        groupOf: indexed.groupPlaces,
        groupsBefore: groups,
        wanted: mask?.series,
        wantedGroups: mask?.groups,
      })
      groups += indexed.groups
    }
    const pageEnd = page.offset + page.limit
    const marks = { marks: this.#windowMarks, span: groups }
    const stretch = pageStretch(spans, first, end, { offset: page.offset, end: pageEnd }, marks)
    if (slotsToWalk(spans, stretch.from, stretch.to) > WALK_PER_SERIES * wanted.series) return undefined
    const met = stretch.groupsMet()
    const total = stretch.total()
    const keyOf = (nth: number) =>
      (owners[met.owners[nth] as number] as PublisherSeries).groupKeys[met.places[nth] as number] as string
    const ordered = pageInOrder(
      Float64Array.from(met.nexts),
      (nth) => met.nexts[nth] as number,
      keyOf,
      page.offset - stretch.before,
      page.limit,
    )
    const bit = 1 << status
    const figures = { count: 0, first: 0, before: 0 }
    const onPage = ordered.map(({ nth, next, key }): GroupOnPage => {
      const indexed = owners[met.owners[nth] as number] as PublisherSeries
      const mask = wanted.masks?.get(indexed)
      const found: GroupOnPage = { key, next, count: 0, traits: 0, series: [] }
      for (const place of indexed.byGroupKey.get(key) ?? NONE) {
        const traits = indexed.traits[place] as number
        if (!(traits & bit) || !isWanted(mask?.series, place)) continue
        indexed.slotsWithin(this.db, place, status, from, through, figures)
        if (figures.count === 0) continue
        found.count += figures.count
        found.traits |= traits
        found.series.push(indexed.all[place] as Series)
      }
      // In the order the index holds them (by id), as a tallied search gives them.
      found.series.sort((a, b) => a.id - b.id)
      return found
    })
    return { total, groups: onPage }
  }

  /**
   * The series a window search wants: every one (no masks) when no filter is given but a publisher, else
   * per publisher a bit per place of those the filters want; undefined when they are fewer than
   * WINDOW_MIN_SERIES. `series`: how many, at most.
   */
  #wantedSeries(
    filters: SeriesFilters,
    status: number,
  ): { masks?: Map<PublisherSeries, WantedPlaces>; series: number } | undefined {
    this.refresh()
    const sole = soleListFilter(filters)
    if (sole === 'every') {
      let series = 0
      for (const [, indexed] of this.#searched(filters)) series += indexed.all.length
      return { series }
    }
    const masks = new Map<PublisherSeries, WantedPlaces>()
    let series = 0
    if (sole !== undefined) {
      // One listed filter alone: its lists are the series wanted, marked from them as they are (their union
      // gathered first, then tested series by series, cost such a search 0.5-1 ms more).
      const wanted = this.#wanted(filters)
      const bit = 1 << status
      for (const [, indexed] of this.#searched(filters)) {
        let mask: Int32Array | undefined
        for (const list of indexed.listsOf(sole, wanted) ?? []) {
          for (const place of list ?? NONE) {
            if (!((indexed.traits[place] as number) & bit)) continue
            mask ??= new Int32Array(Math.ceil(indexed.all.length / 32))
            if (hasBit(mask, place)) continue
            setBit(mask, place)
            series++
          }
        }
        if (mask) masks.set(indexed, { series: mask, groups: undefined })
      }
      return series < WINDOW_MIN_SERIES ? undefined : { masks, series }
    }
    const traitsKey = traitsOnlyKey(filters)
    // NPIs are looked up in the publishers naming them (#matchFiltered): as soon matched as bounded.
    if (traitsKey === undefined && filters.npi === undefined) {
      // As many as the filters' lists can hold: too few are not matched twice (here, then by the tally).
      const wanted = this.#wanted(filters)
      let most = 0
      for (const [, indexed] of this.#searched(filters))
        most += indexed.fewestListed(INDEXED_FILTERS, wanted)?.places ?? indexed.all.length
      if (most < WINDOW_MIN_SERIES) return undefined
    }
    if (traitsKey !== undefined) {
      const test = traitsTest(wantedOf(filters))
      for (const [, indexed] of this.#searched(filters)) {
        const mask = indexed.traitMask(traitsKey, status, test)
        let held = 0
        for (const word of mask.series) held += bitCount(word)
        if (held > 0) masks.set(indexed, mask)
        series += held
      }
      return series < WINDOW_MIN_SERIES ? undefined : { masks, series }
    }
    // Found as a tally finds them: too few for the walk, they are tallied as found here.
    const found = this.#find(filters, status)
    if (found < WINDOW_MIN_SERIES) return undefined
    let last: PublisherSeries | undefined
    let mask = new Int32Array(0)
    for (let entry = 0; entry < found; entry++) {
      const indexed = this.#foundIn[entry] as PublisherSeries
      // A publisher's series are found together.
      if (indexed !== last) {
        mask = new Int32Array(Math.ceil(indexed.all.length / 32))
        masks.set(indexed, { series: mask, groups: undefined })
        last = indexed
      }
      setBit(mask, this.#foundAt[entry] as number)
    }
    return { masks, series: found }
  }

  /** The series of an entry of the last `eachMatching`. */
  entrySeries(entry: number): Series {
    if (entry >= this.#entries) throw new RangeError(`no entry ${entry} in the last search`)
    return (this.#foundIn[entry] as PublisherSeries).all[this.#foundAt[entry] as number] as Series
  }

  /**
   * Puts each served series that meets the filters and holds slots of the status in the scratch lists, as
   * publisher and place, a publisher's together; returns how many.
   */
  #find(filters: SeriesFilters, status: number): number {
    this.refresh()
    if (this.#entriesFor?.filters === filters && this.#entriesFor.status === status) return this.#entries
    this.#releaseEntries()
    const bit = 1 << status
    let count = 0
    const take = (indexed: PublisherSeries, place: number) => {
      if (count === this.#foundAt.length) {
        const grown = new Int32Array(count * 2)
        grown.set(this.#foundAt)
        this.#foundAt = grown
      }
      this.#foundIn[count] = indexed
      this.#foundAt[count++] = place
    }
    if (filtersNoSeries(filters)) {
      for (const indexed of this.#publishers.values()) {
        const { traits } = indexed
        for (let place = 0; place < traits.length; place++)
          if ((traits[place] as number) & bit) take(indexed, place)
      }
    } else {
      // Listed filters and traits: each place of the lists once, tested on the rest, in the order listed
      // (their union gathered first, in place order, cost a search over 100 service types a third more).
      const listed = this.#listedWith(filters)
      if (listed)
        for (const { indexed, lists, test } of listed) {
          const { traits } = indexed
          indexed.eachListed(lists, (place) => {
            if ((traits[place] as number) & bit && (!test || test(place))) take(indexed, place)
          })
        }
      else this.#matchFiltered(filters, bit, take)
    }
    this.#entries = count
    this.#entriesFor = { filters, status }
    return count
  }

  /** Lets go of the publishers the last `eachMatching` left in the scratch lists, which keep their room. */
  #releaseEntries() {
    this.#foundIn.fill(undefined as unknown as PublisherSeries, 0, this.#entries)
    this.#entries = 0
    this.#entriesFor = undefined
  }

  /** Each found series' entries, copied out of the scratch lists at the size found. */
  #copyFound(count: number, status: number, from: number | undefined): Found {
    const found: Found = {
      series: sized(count),
      counts: sized(count),
      firsts: sized(count),
      from,
      countsFrom: [],
      firstsFrom: [],
    }
    const statuses = SLOT_STATUSES.length
    // Whether every series' slots all start from `from` on: its figures at any time are those from then on.
    let whole = true
    for (let at = 0; at < count; at++) {
      const indexed = this.#foundIn[at] as PublisherSeries
      const place = this.#foundAt[at] as number
      const first = indexed.firsts[place * statuses + status] as number
      found.series[at] = indexed.all[place] as Series
      found.counts[at] = indexed.counts[place * statuses + status] as number
      found.firsts[at] = first
      if (from !== undefined && first < from) whole = false
    }
    if (whole) {
      found.countsFrom = found.counts
      found.firstsFrom = found.firsts
    } else this.#slotsFrom(found, count, status, from as number)
    // The scratch holds no publisher past the search (one let go is not kept by it), and keeps its room.
    this.#foundIn.fill(undefined as unknown as PublisherSeries, 0, count)
    return found
  }

  /** Each found series' slots from a moment on, from its publisher's kept figures (PublisherSeries.slotsFrom). */
  #slotsFrom(found: Found, count: number, status: number, from: number) {
    const slots = { count: 0, first: 0, before: 0 }
    found.countsFrom = sized(count)
    found.firstsFrom = sized(count)
    for (let at = 0; at < count; at++) {
      const indexed = this.#foundIn[at] as PublisherSeries
      indexed.slotsFrom(this.db, this.#foundAt[at] as number, status, from, slots)
      found.countsFrom[at] = slots.count
      found.firstsFrom[at] = slots.first
    }
  }

  /** Hands `take` each served series that meets the series-level filters and holds slots of the status bit. */
  #matchFiltered(
    filters: SeriesFilters,
    bit: number,
    take: (indexed: PublisherSeries, place: number) => void,
  ): void {
    const wanted = this.#wanted(filters)
    const testsFor = filterTests(wanted)
    const npisOf = wanted.npi && this.#npisByPublisher(wanted.npi)
    for (const [, indexed] of this.#searched(filters)) {
      let asked = wanted
      if (npisOf) {
        const npi = npisOf.get(indexed)
        if (!npi) continue
        asked = { ...wanted, npi }
      }
      // Not testing again what the index settled: a specialty's codes for each of 1,700 series cost half a
      // millisecond.
      const { list, met } = indexed.candidates(asked)
      const meets = indexed.tester(testsFor(met))
      const { traits } = indexed
      const test = (place: number) => {
        if ((traits[place] as number) & bit && meets(place)) take(indexed, place)
      }
      if (list === undefined) for (let place = 0; place < traits.length; place++) test(place)
      else for (let at = 0; at < list.length; at++) test(list[at] as number)
    }
  }

  /** The NPIs of the list that each publisher's series name, by publisher (those naming none are left out). */
  #npisByPublisher(npis: string[]): Map<PublisherSeries, string[]> {
    const byPublisher = new Map<PublisherSeries, string[]>()
    for (const npi of npis) {
      for (const indexed of this.#npiPublishers.get(npi) ?? []) {
        const listed = byPublisher.get(indexed)
        if (listed) listed.push(npi)
        else byPublisher.set(indexed, [npi])
      }
    }
    return byPublisher
  }

  /**
   * For the answer cache: whether an answer to these filters made now still holds after the database has
   * changed. It does while every publisher changed since (synced, disabled, enabled) is one none of whose
   * series matched the filters then and none matches now: a sync of one publisher leaves the answers of
   * searches in other states standing. An answer over every series holds through no change. Nothing is
   * looked at until it is asked (an answer not kept costs nothing); the publishers as they were are held
   * until then, and let go once it holds as of now.
   */
  answerHolds(filters: SeriesFilters): () => boolean {
    this.refresh()
    let made = this.#served
    return () => {
      this.refresh()
      const now = this.#served
      if (now === made) return true
      if (filtersNoSeries(filters)) return false
      const wanted = wantedOf(filters)
      const testsFor = filterTests(wanted)
      const matchedIn = (slug: string, indexed: PublisherSeries | undefined) =>
        indexed !== undefined && involves(slug, indexed, filters, wanted, testsFor)
      for (const slug of new Set([...made.keys(), ...now.keys()])) {
        const before = made.get(slug)
        const after = now.get(slug)
        if (before?.part !== after?.part && (matchedIn(slug, before) || matchedIn(slug, after))) return false
      }
      made = now
      return true
    }
  }

  /** Slots of every status the served series of these publishers hold, as of the last refresh. */
  servedSlots(publishers: Iterable<string>): number {
    let slots = 0
    for (const slug of publishers) slots += this.#publishers.get(slug)?.slots ?? 0
    return slots
  }

  /**
   * The filters less those whose values name every series of each publisher searched (every specialty, say):
   * such a filter excludes nothing, and a search without it is answered from what the index keeps for every
   * series rather than series by series. Brings changed publishers up to date when a listed filter is asked.
   */
  withoutWholeFilters<T extends SeriesFilters>(filters: T): T {
    let left = filters
    let wanted: Wanted | undefined
    for (const filter of WHOLE_FILTERS) {
      if (filters[filter] === undefined) continue
      this.refresh()
      wanted ??= this.#wanted(filters)
      let whole = true
      for (const [, indexed] of this.#searched(filters)) {
        whole = indexed.namesEvery(filter, wanted)
        if (!whole) break
      }
      if (whole) left = { ...left, [filter]: undefined }
    }
    return left
  }

  /** Slots of the status every served series holds (at any time), after bringing changed publishers up to date. */
  servedSlotsOf(status: number): number {
    this.refresh()
    let slots = 0
    for (const indexed of this.#publishers.values()) slots += indexed.statusSlots[status] as number
    return slots
  }

  /**
   * Slots of the status every served series holds starting from `from` through `through` (undefined:
   * unbounded), as of the last refresh: what a window over every series counts, in microseconds.
   */
  servedWithin(status: number, from: number | undefined, through: number | undefined): number {
    let slots = 0
    for (const indexed of this.#publishers.values())
      slots += indexed.servedWithin(this.db, status, from, through)
    return slots
  }

  /**
   * The first start of a served slot of the status at or after `moment` (undefined when none is left), after
   * bringing changed publishers up to date: a binary search in each publisher's served starts.
   */
  servedNext(status: number, moment: number): number | undefined {
    this.refresh()
    let next: number | undefined
    for (const indexed of this.#publishers.values()) {
      const sorted = indexed.servedStarts(this.db, status)
      const first = sorted[countBefore(sorted, moment)]
      if (first !== undefined && (next === undefined || first < next)) next = first
    }
    return next
  }

  /**
   * For a slot search over listed filters and traits (listedFiltersAmongTraits; a publisher besides): per
   * publisher holding their values, the matching series as a page's source, from the lists of the filter
   * listing the fewest (`#listedWith`). One value and no other filter (a state, a city, one service type):
   * its series' starts together, kept per list (`PublisherSeries.listSource`), unless `oneValue` is false
   * (a first page from now is as soon counted from each series' kept figures, and those starts are made by
   * a value's first search). Else, in a window (`through` given) holding at most WALK_PER_SERIES_SOURCED
   * slots per series listed, the slots in it of the series matching, walked in each publisher's served
   * starts packed with their places (`windowSource`); else each value's starts kept, less the series listed
   * again or not matching (`listsSource`). Undefined for any other search, or where that would take off more
   * series than it leaves.
   */
  listedSources(
    filters: SeriesFilters,
    status: number,
    from: number | undefined,
    through: number | undefined,
    oneValue: boolean,
  ): RunSource[] | undefined {
    const listed = this.#listedWith(filters)
    if (listed === undefined) return undefined
    const oneList = listed.every(({ lists }) => lists.length === 1)
    if (oneList && !oneValue) return undefined
    const eachValue = () => {
      const sources: RunSource[] = []
      for (const { slug, indexed, lists, test } of listed) {
        const source =
          lists.length === 1 && !test
            ? indexed.listSource(this.db, slug, lists[0] as readonly number[], status)
            : indexed.listsSource(this.db, slug, lists, status, test)
        if (source === undefined) return undefined
        if (source) sources.push(source)
      }
      return sources
    }
    // One value alone: its starts are kept, in a window too.
    if (through === undefined || (oneList && listed.every(({ test }) => !test))) return eachValue()
    // Whole seconds, the end excluded, as packed: a start is in the window when its second is.
    const first = from === undefined ? 0 : Math.ceil(from / 1000)
    const end = Math.floor(through / 1000) + 1
    let slots = 0
    let series = 0
    const spans: { lo: number; hi: number }[] = []
    for (const { indexed, lists } of listed) {
      const packed = indexed.windowStarts(status)?.packed
      if (!packed) return eachValue()
      const lo = packedFrom(packed, first)
      const hi = packedFrom(packed, end, lo)
      spans.push({ lo, hi })
      slots += hi - lo
      for (const list of lists) series += list.length
    }
    if (slots > WALK_PER_SERIES_SOURCED * series) return eachValue()
    return listed.flatMap(({ slug, indexed, lists, test }, nth) => {
      const { lo, hi } = spans[nth] as { lo: number; hi: number }
      return indexed.windowSource(slug, lists, test, status, lo, hi - lo) ?? []
    })
  }

  /**
   * For a search over listed filters and traits (listedFiltersAmongTraits), after bringing changed
   * publishers up to date: each publisher holding its listed values, with the non-empty lists of the filter
   * whose lists hold the fewest places there, and the test of its other filters on a place (undefined: none
   * left). Undefined for any other search.
   */
  #listedWith(filters: SeriesFilters): TestedPublisher[] | undefined {
    const names = listedFiltersAmongTraits(filters)
    if (names === undefined) return undefined
    this.refresh()
    const wanted = this.#wanted(filters)
    const testsFor = filterTests(wanted)
    const publishers: TestedPublisher[] = []
    for (const [slug, indexed] of this.#searched(filters)) {
      const fewest = indexed.fewestListed(names, wanted)
      if (!fewest || fewest.places === 0) continue
      const tests = testsFor(fewest.filter)
      const test = tests.classes !== undefined || tests.rest ? indexed.tester(tests) : undefined
      publishers.push({ slug, indexed, lists: fewest.lists, test })
    }
    return publishers
  }

  /**
   * For a search whose filters are one listed filter alone (soleListFilter) or none (`every`), after bringing
   * changed publishers up to date: each publisher in it with the non-empty lists of the values asked (every
   * place as one list for none). Undefined for any other search.
   */
  #listedAlone(
    filters: SeriesFilters,
  ): { every: boolean; wanted: Wanted; publishers: ListedPublisher[] } | undefined {
    const filter = soleListFilter(filters)
    if (filter === undefined) return undefined
    this.refresh()
    const wanted = this.#wanted(filters)
    const publishers: ListedPublisher[] = []
    for (const [slug, indexed] of this.#searched(filters)) {
      const lists =
        filter === 'every'
          ? [indexed.allPlaces()]
          : (indexed.listsOf(filter, wanted) ?? []).filter((list): list is number[] => !!list?.length)
      if (lists.length > 0) publishers.push({ slug, indexed, lists })
    }
    return { every: filter === 'every', wanted, publishers }
  }

  /**
   * Where a deep page of matches starting from `startAfter` can begin (startTimes.ts): a later moment and how
   * many of the `total` matches lie before it. `series` undefined: every served series matches, and the
   * moment is the very start of the match at the offset (from every publisher's served starts).
   */
  skipAhead(
    series: Series[] | undefined,
    status: number,
    total: number,
    startAfter: number | undefined,
    offset: number,
  ): { from: number; skipped: number } | undefined {
    if (series === undefined) {
      const lists = [...this.#publishers.values()].map((indexed) => indexed.servedStarts(this.db, status))
      return nthStart(lists, startAfter, offset)
    }
    return skipAhead(
      (visit) => this.#eachStarts(series, status, (_, starts, lo, hi) => visit(starts, lo, hi)),
      total,
      startAfter,
      offset,
    )
  }

  /**
   * A page over every served series' slots of the status from `from` through `through` (undefined:
   * unbounded), past its first `skip` (`pageRunsOf`).
   */
  pageRuns(
    status: number,
    from: number | undefined,
    through: number | undefined,
    skip: number,
    limit: number,
  ): PageRun[] {
    const sources = [...this.#publishers.entries()].flatMap(([slug, indexed]): RunSource[] => {
      const [members] = indexed.members()
      return members
        ? [{ prefix: slotIdPrefix(slug), members, starts: [indexed.servedStarts(this.db, status)] }]
        : []
    })
    return pageRunsOf(sources, from, through, skip, limit)
  }

  /**
   * For a slot search whose only series filters are traits (traitsOnlyKey; a publisher besides), after
   * bringing changed publishers up to date: per publisher holding matches, its matching series as a page's
   * source (PublisherSeries.traitSource). Undefined for any other search.
   */
  traitSources(filters: SeriesFilters, status: number): RunSource[] | undefined {
    const key = traitsOnlyKey(filters)
    const test = key === undefined ? undefined : traitsTest(wantedOf(filters))
    if (key === undefined || test === undefined) return undefined
    this.refresh()
    const sources: RunSource[] = []
    for (const [slug, indexed] of this.#searched(filters)) {
      const source = indexed.traitSource(this.db, slug, key, status, test)
      if (source) sources.push(source)
    }
    return sources
  }

  /**
   * Visits each of these served series that has slots of the status from `from` to `through` (both
   * included; undefined: unbounded), by its place in the list, with how many and the first one's start: a
   * binary search in its starts, as of the last refresh.
   */
  eachWithin(
    series: Series[],
    status: number,
    from: number | undefined,
    through: number | undefined,
    visit: (nth: number, count: number, next: number) => void,
  ): void {
    this.#eachStarts(series, status, (nth, starts, first, end) => {
      const lo = firstFrom(starts, from, first, end)
      const hi = endThrough(starts, through, first, end)
      if (hi > lo) visit(nth, hi - lo, starts[lo] as number)
    })
  }

  /**
   * Visits each of these served series, by its place in the list, with its part's starts of the status and
   * the range of them that are its own (empty for one with none), as of the last refresh.
   */
  #eachStarts(
    series: Series[],
    status: number,
    visit: (nth: number, starts: Float64Array, lo: number, hi: number) => void,
  ): void {
    let sync: SyncStarts | undefined
    let publisher: string | undefined
    for (let nth = 0; nth < series.length; nth++) {
      const entry = series[nth] as Series
      // A publisher's series are listed together: its starts are looked up where the publisher changes.
      if (entry.publisher !== publisher) {
        publisher = entry.publisher
        sync = this.#publishers.get(publisher)?.starts(this.db, status)
      }
      if (sync) visit(nth, sync.starts, startsBegin(sync, entry.id), startsEnd(sync, entry.id))
    }
  }

  /** The publishers a search covers, with their series: the one it names, or every one. */
  #searched(filters: SeriesFilters): Iterable<[string, PublisherSeries]> {
    if (filters.publisher === undefined) return this.#publishers
    const indexed = this.#publishers.get(filters.publisher)
    return indexed ? [[filters.publisher, indexed]] : []
  }

  /**
   * Brings changed publishers up to date now (every search does, first; a few µs when nothing changed). A
   * server awaits `ready` before a search instead, so that this finds nothing left to do.
   */
  refresh() {
    runNow(this.#catchUp(FREE))
  }

  /**
   * Undefined when the index is up to date with the store and holds the starts of `status`; else a promise of
   * bringing it up to date, in slices between which the event loop serves other requests (loaded at once, a
   * publisher of 300,000 slots held it 0.1-0.3 s, and the national bench set synced with no search in between
   * 1.0-1.2 s; a busy search's starts made at once after such a sync, tens of ms). Callers meanwhile share
   * that one promise, and look again once it is kept: another status may still be missing.
   */
  ready(status: number = FREE): Promise<void> | undefined {
    if (this.db.changeGeneration() === this.#generation && this.#startsHeld.has(status)) return undefined
    this.#catchingUp ??= runInSlices(this.#catchUp(status)).finally(() => {
      this.#catchingUp = undefined
    })
    return this.#catchingUp.then(() => this.ready(status))
  }

  /**
   * Loads each publisher synced, enabled or disabled since the last time and puts it in place, then lets go
   * of those no longer served. Done in slices, it is done when no change has come since the publishers were
   * listed (else they are listed again; those in place already are not loaded again). Searches wait for it
   * (`ready`), so none sees some publishers in place and others not yet. Then it makes the starts of `status`
   * that a served publisher does not hold yet.
   */
  *#catchUp(status: number): Steps<void> {
    let changed = false
    for (;;) {
      const generation = this.db.changeGeneration()
      if (generation === this.#generation) break
      const served = new Map<string, number>()
      for (const { slug, enabled, part } of this.db
        .statement('SELECT slug, enabled, slot_part AS part FROM publishers')
        .all() as { slug: string; enabled: number; part: number | null }[]) {
        if (enabled === 1 && part !== null) served.set(slug, part)
      }
      let complete = true
      for (const [slug, part] of served) {
        if (this.#publishers.get(slug)?.part === part) continue
        const indexed = yield* this.#load(slug, part)
        if (indexed) this.#put(slug, indexed)
        else complete = false
        changed = true
        yield
      }
      for (const slug of this.#publishers.keys()) {
        if (served.has(slug)) continue
        this.#forget(slug)
        this.#publishers.delete(slug)
        changed = true
      }
      if (!complete || this.db.changeGeneration() !== generation) continue
      if (changed) {
        this.#served = new Map(this.#publishers)
        this.#startsHeld = new Set([FREE])
      }
      this.#generation = generation
      break
    }
    if (this.#startsHeld.has(status)) return
    const served = this.#served
    for (const indexed of served.values()) {
      yield* indexed.servedStartsSteps(this.db, status)
      yield
    }
    // Publishers put in place meanwhile (a synchronous refresh) may not hold them: the next asking makes them.
    if (this.#served === served) this.#startsHeld.add(status)
  }

  /** Serves the publisher's series as loaded, in place of those it had. */
  #put(slug: string, indexed: PublisherSeries) {
    this.#forget(slug)
    for (const series of indexed.all) this.#byId.set(series.id, series)
    this.#listedValues.count(valuesOf(indexed), 1)
    for (const npi of indexed.byNpi.keys()) {
      const publishers = this.#npiPublishers.get(npi)
      if (publishers) publishers.push(indexed)
      else this.#npiPublishers.set(npi, [indexed])
    }
    this.#publishers.set(slug, indexed)
  }

  /**
   * One publisher's series as of its sync `part`, read LOAD_ROWS at a time, with its free slots' starts
   * (what every search from now reads); undefined when the publisher was synced again, enabled or disabled
   * while it was being read.
   */
  *#load(slug: string, part: number): Steps<PublisherSeries | undefined> {
    const sync = this.db
      .statement(
        'SELECT transaction_time AS transactionTime, synced_at AS syncedAt FROM publishers WHERE slug = ?',
      )
      .get(slug) as SyncDetails
    const groups = new Map<number, GroupDetails>()
    for (let after = 0; ; yield) {
      const rows = this.db
        .statement(
          `SELECT id, location, provider, is_virtual FROM sched_groups WHERE publisher = ? AND id > ? ORDER BY id LIMIT ${LOAD_ROWS}`,
        )
        .raw()
        .all(slug, after) as [number, string, string | null, number][]
      for (const [id, location, provider, isVirtual] of rows)
        groups.set(id, {
          publisher: slug,
          place: groups.size,
          location,
          provider,
          isVirtual: isVirtual === 1,
        })
      if (rows.length < LOAD_ROWS) break
      after = (rows[rows.length - 1] as [number, ...unknown[]])[0]
    }
    const indexed = new PublisherSeries(part, groups.size)
    const maker = new SeriesMaker(part, sync)
    for (let after = 0; ;) {
      yield
      const rows = this.db
        .statement(
          `SELECT ${SERIES_COLUMNS} FROM sched_series r WHERE r.publisher = ? AND r.id > ? AND ${SERVED_SERIES} ORDER BY r.id LIMIT ${LOAD_ROWS}`,
        )
        .raw()
        .all(slug, after) as SeriesRow[]
      for (const row of rows) {
        const group = groups.get(row[1])
        if (group) indexed.add(maker.toSeries(row, group))
      }
      if (rows.length < LOAD_ROWS) break
      after = (rows[rows.length - 1] as SeriesRow)[0]
    }
    yield* indexed.servedStartsSteps(this.db, FREE)
    yield
    indexed.keyRanks()
    const now = this.db
      .statement('SELECT enabled, slot_part AS part FROM publishers WHERE slug = ?')
      .get(slug) as { enabled: number; part: number | null } | undefined
    return now?.enabled === 1 && now.part === part ? indexed : undefined
  }

  /**
   * The values a search wants (`wantedOf`), less the listed values no served publisher lists (`ListedValues`):
   * made once per search, after bringing changed publishers up to date. Not for `answerHolds`, which tests
   * publishers as they were as well as they are.
   */
  #wanted(filters: SeriesFilters): Wanted {
    this.refresh()
    const kept = this.#wantedFor
    if (kept?.filters === filters && kept.served === this.#served) return kept.wanted
    const wanted = this.#listedValues.known(wantedOf(filters))
    this.#wantedFor = { filters, served: this.#served, wanted }
    return wanted
  }

  /** Lets go of the publisher's series by id and of its NPIs (they are replaced or no longer served). */
  #forget(slug: string) {
    const indexed = this.#publishers.get(slug)
    if (!indexed) return
    this.#releaseEntries()
    for (const series of indexed.all) this.#byId.delete(series.id)
    this.#listedValues.count(valuesOf(indexed), -1)
    for (const npi of indexed.byNpi.keys()) {
      const others = (this.#npiPublishers.get(npi) ?? []).filter((publisher) => publisher !== indexed)
      if (others.length > 0) this.#npiPublishers.set(npi, others)
      else this.#npiPublishers.delete(npi)
    }
  }

  /** A served series by id, as of the last refresh. */
  seriesById(id: number): Series | undefined {
    return this.#byId.get(id)
  }
}
