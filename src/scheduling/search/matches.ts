import type { SlotStatus } from '../model.js'
import { filled } from './arrays.js'
import type { Found, SlotIndex } from './slotIndex.js'
import { filtersNoSeries, type SeriesFilters, statusIndex } from './series.js'

/**
 * Which served series a search matches, and how many of their slots: what every listing (slots, groups)
 * settles first. Status and time are conditions on slots; every other filter is settled on series.
 */

/** The filters every slot listing shares; the grouped listings ignore `groupKeys`. */
export interface SlotFilters extends SeriesFilters {
  status: SlotStatus
  /** Epoch ms; slots starting at or after. */
  startAfter?: number
  /** `startAfter` is the request's own moment (no explicit value): an answer holds until the next start. */
  startsNow?: boolean
  /** Epoch ms; slots starting at or before. */
  startBefore?: number
}

export interface Page {
  limit: number
  offset: number
}

/** Conditions on `t` (sched_slots): status and time; every other filter is settled on series. */
export interface SlotConditions {
  slotSql: string
  slotParams: Record<string, string | number>
}

export function slotConditions(filters: SlotFilters): SlotConditions {
  const slot = ['t.status = @status']
  const slotParams: Record<string, string | number> = { status: statusIndex(filters.status) }
  if (filters.startAfter !== undefined) {
    slot.push('t.start_ms >= @startAfter')
    slotParams.startAfter = filters.startAfter
  }
  if (filters.startBefore !== undefined) {
    slot.push('t.start_ms <= @startBefore')
    slotParams.startBefore = filters.startBefore
  }
  return { slotSql: slot.join(' AND '), slotParams }
}

/**
 * The matching series that hold slots of the asked status, with what the index packs of each (for every
 * served series: made on first use).
 */
export interface SeriesMatch extends Readonly<Found> {
  /** Their ids as a JSON array, bound as one parameter (made on first use: for every series, a few ms). */
  readonly ids: string
  /** No series-level filter: every served series matches. */
  everySeries: boolean
  /** Slots of the asked status those series hold at any time: the size of the work. */
  slots: number
  status: number
}

/** A match of the series found. */
export function listedMatch(found: Found, status: number): SeriesMatch {
  const { series, counts } = found
  let slots = 0
  for (const count of counts) slots += count
  let ids: string | undefined
  return {
    ...found,
    get ids() {
      ids ??= JSON.stringify(series.map((candidate) => candidate.id))
      return ids
    },
    everySeries: false,
    slots,
    status,
  }
}

export function matchSeries(index: SlotIndex, filters: SlotFilters): SeriesMatch | undefined {
  const status = statusIndex(filters.status)
  // A window's matches are counted from each series' starts (matchedSlots): their figures from its first
  // moment on would be made for nothing (a binary search per series).
  const from = filters.startBefore === undefined ? filters.startAfter : undefined
  const holding = () => index.match(filters, status, from)
  if (!filtersNoSeries(filters)) {
    const match = listedMatch(holding(), status)
    return match.slots === 0 ? undefined : match
  }
  // Every served series matches: the index keeps their figures, so no series is looked at unless asked for.
  const slots = index.servedSlotsOf(status)
  if (slots === 0) return undefined
  let match: SeriesMatch | undefined
  const listed = () => (match ??= listedMatch(holding(), status))
  return {
    get series() {
      return listed().series
    },
    get counts() {
      return listed().counts
    },
    get firsts() {
      return listed().firsts
    },
    from,
    get countsFrom() {
      return listed().countsFrom
    },
    get firstsFrom() {
      return listed().firstsFrom
    },
    get ids() {
      return listed().ids
    },
    everySeries: true,
    slots,
    status,
  }
}

/**
 * Per series of a match, in its order: how many of its slots match, and the first one's start (none:
 * +Infinity). Arrays, not typed arrays: made per search, a typed array's memory outside the heap cost more
 * to get and to give back (a fifth of a grouped search's time went to collecting them). Read-only: they
 * may be the match's own.
 */
export interface Matched {
  counts: number[]
  nexts: number[]
  total: number
}

/**
 * Each matching series' matches and first match. From a moment on (no `startBefore`), as the match found
 * them; in a window, or from another moment, from each series' slot starts (startTimes.ts): a binary search
 * per series whatever the number of slots, not a read of its slots.
 */
export function matchedSlots(index: SlotIndex, match: SeriesMatch, filters: SlotFilters): Matched {
  const { series, status } = match
  const { startAfter, startBefore } = filters
  if (startBefore === undefined && startAfter === match.from) {
    let total = 0
    for (const count of match.countsFrom) total += count
    return { counts: match.countsFrom, nexts: match.firstsFrom, total }
  }
  const counts = filled(series.length, 0)
  const nexts = filled(series.length, Number.POSITIVE_INFINITY)
  let total = 0
  index.eachWithin(series, status, startAfter, startBefore, (at, count, next) => {
    counts[at] = count
    nexts[at] = next
    total += count
  })
  return { counts, nexts, total }
}

/**
 * How many slots match, when no series need be looked at for it: no time asked (every slot of the matching
 * series), or every served series at any time (each publisher's served starts). Undefined otherwise: count
 * with `matchedSlots`.
 */
export function countBySeriesFigures(
  index: SlotIndex,
  match: SeriesMatch,
  filters: SlotFilters,
): number | undefined {
  const { startAfter, startBefore } = filters
  if (startAfter === undefined && startBefore === undefined) return match.slots
  if (!match.everySeries) return undefined
  return index.servedWithin(match.status, startAfter, startBefore)
}

/**
 * When a search from now stops answering as it does now: at the first start of a slot of `status` from
 * `now` on, since no match can start in between. Undefined when none is left: only new data changes it.
 */
export function answerHoldsThrough(index: SlotIndex, filters: SlotFilters, now: number): number | undefined {
  if (!filters.startsNow) return undefined
  // The first served slot of the status from now on, whatever the filters: no match can start before it.
  return index.servedNext(statusIndex(filters.status), now)
}
