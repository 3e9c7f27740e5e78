import type { Db } from '../../db/open.js'
import type { SlotStatus } from '../model.js'
import { SLOTS_BY_SERIES } from '../schema.js'
import type { SlotIndex } from './slotIndex.js'
import { filtersNoSeries, type Series, type SeriesFilters, statusIndex } from './series.js'

/**
 * Which served series a search matches, and how many of their slots: what every listing (slots, groups)
 * settles first. Status and time are conditions on slots; every other filter is settled on series.
 */

/** The filters every slot listing shares; the grouped listings ignore `groupKeys`. */
export interface SlotFilters extends SeriesFilters {
  status: SlotStatus
  /** Epoch ms; slots starting at or after. */
  startAfter?: number
  /** `startAfter` is the request's own moment (no explicit value): only a few matches lie before it. */
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

export interface SeriesMatch {
  /** The matching series that hold slots of the asked status (for every served series: made on first use). */
  readonly series: Series[]
  /** Their ids as a JSON array, bound as one parameter (made on first use: for every series, a few ms). */
  readonly ids: string
  /** No series-level filter: every served series matches. */
  everySeries: boolean
  /** Slots of the asked status those series hold at any time: the size of the work. */
  slots: number
  status: number
}

/** A match of the series listed. */
export function listedMatch(series: Series[], status: number): SeriesMatch {
  let slots = 0
  for (const candidate of series) slots += candidate.counts[status] as number
  let ids: string | undefined
  return {
    series,
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
  const holding = () => index.match(filters).filter((candidate) => (candidate.counts[status] as number) > 0)
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
    get ids() {
      return listed().ids
    },
    everySeries: true,
    slots,
    status,
  }
}

/**
 * A search from a moment on with no end (the default: from now) matches a series' slots of that status
 * minus the few that started before: counting those is cheap whatever the number of matches.
 */
const countsByComplement = (filters: SlotFilters) =>
  filters.startBefore === undefined && (filters.startAfter === undefined || filters.startsNow === true)

/** Series whose first slot of the asked status starts before `startAfter`: the only ones with past slots. */
function withPast(match: SeriesMatch, filters: SlotFilters): Series[] {
  const after = filters.startAfter
  if (after === undefined) return []
  return match.series.filter((series) => (series.firsts[match.status] as number) < after)
}

/** Slots of the asked status that started before `startAfter`, per series. */
function pastCounts(db: Db, match: SeriesMatch, filters: SlotFilters): Map<number, number> {
  const series = withPast(match, filters)
  if (series.length === 0) return new Map()
  const rows = db
    .statement(
      `SELECT t.series_id, count(*) FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
     WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND t.status = @status AND t.start_ms < @startAfter
     GROUP BY t.series_id`,
    )
    .raw()
    .all({
      ids: JSON.stringify(series.map((entry) => entry.id)),
      status: match.status,
      startAfter: filters.startAfter as number,
    }) as [number, number][]
  return new Map(rows)
}

export function countMatches(
  index: SlotIndex,
  match: SeriesMatch,
  filters: SlotFilters,
  conditions: SlotConditions,
) {
  const { db } = index
  if (countsByComplement(filters)) {
    if (match.everySeries && filters.startAfter !== undefined) {
      return index.servedFrom(match.status, filters.startAfter).slots
    }
    let past = 0
    for (const count of pastCounts(db, match, filters).values()) past += count
    return match.slots - past
  }
  return db
    .statement(
      `SELECT count(*) FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
     WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${conditions.slotSql}`,
    )
    .pluck()
    .get({ ...conditions.slotParams, ids: match.ids }) as number
}

/** Matches per series (zero-match series omitted), each with its soonest start. */
export function seriesStats(
  db: Db,
  match: SeriesMatch,
  filters: SlotFilters,
  conditions: SlotConditions,
): Map<number, { count: number; next: number }> {
  const stats = new Map<number, { count: number; next: number }>()
  if (!countsByComplement(filters)) {
    const rows = db
      .statement(
        `SELECT t.series_id, count(*), min(t.start_ms) FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
       WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${conditions.slotSql} GROUP BY t.series_id`,
      )
      .raw()
      .all({ ...conditions.slotParams, ids: match.ids }) as [number, number, number][]
    for (const [id, count, next] of rows) stats.set(id, { count, next })
    return stats
  }
  const past = pastCounts(db, match, filters)
  const started = withPast(match, filters)
  // Only a series with past slots needs a seek for its next start; for the others it is their first.
  const nexts = new Map(
    started.length === 0
      ? []
      : (db
          .statement(
            `SELECT j.value, (SELECT t.start_ms FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
                            WHERE t.series_id = j.value AND ${conditions.slotSql} ORDER BY t.start_ms LIMIT 1)
           FROM json_each(@ids) j`,
          )
          .raw()
          .all({
            ...conditions.slotParams,
            ids: JSON.stringify(started.map((series) => series.id)),
          }) as [number, number | null][]),
  )
  for (const series of match.series) {
    const count = (series.counts[match.status] as number) - (past.get(series.id) ?? 0)
    const next = nexts.has(series.id) ? nexts.get(series.id) : series.firsts[match.status]
    if (count > 0 && next !== null && next !== undefined) stats.set(series.id, { count, next })
  }
  return stats
}

/**
 * When a search from now stops answering as it does now: at the first start of a slot of `status` from
 * `now` on, since no match can start in between. Undefined when none is left: only new data changes it.
 */
export function answerHoldsThrough(index: SlotIndex, filters: SlotFilters, now: number): number | undefined {
  if (!filters.startsNow) return undefined
  // The first served slot of the status from now on, whatever the filters: no match can start before it.
  return index.servedFrom(statusIndex(filters.status), now).next ?? undefined
}
