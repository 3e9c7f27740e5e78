import { type Coding, SLOT_STATUSES, slotIdPrefix } from '../model.js'
import { RawJson } from '../../rawJson.js'
import { SLOT_ORDER, SLOTS_BY_SERIES } from '../schema.js'
import {
  countBySeriesFigures,
  listedMatch,
  type Matched,
  matchedSlots,
  matchSeries,
  type Page,
  type SeriesMatch,
  type SlotConditions,
  slotConditions,
  type SlotFilters,
} from './matches.js'
import {
  foundAt,
  type PageRun,
  pageRunsOf,
  type RunSource,
  type SlotIndex,
  sourceSlotsWithin,
} from './slotIndex.js'
import { masksBySync, type Series, type SeriesMask, statusIndex } from './series.js'
import { firstMatches } from './startTimes.js'
import { iso, summaries } from './summaries.js'

/** The slot listing: one page of matching slots in start order, read by key columns first, then whole. */

/**
 * A compound SELECT has at most 500 terms (SQLite's limit). The merge pads its parts to a power of two, so
 * that a few statements serve every number of parts; 256 is the largest that fits.
 */
const MAX_MERGED_PARTS = 256

/**
 * SQLite reads a LIMIT that is a bare parameter as a constant when it plans, so binding it again makes the
 * statement be planned again on its next run: for a merge of 64 parts, 0.4 ms a search. An expression is not.
 */
const PAGE_LIMIT = '@limit + 0'

/**
 * Walking the matching parts' slots in start order and skipping non-members costs about
 * (offset + limit + parts) / density rows, density being the matches' share of those parts' slots;
 * collecting the members' slots and sorting costs about their number. Take the cheaper.
 */
function walksByStart(index: SlotIndex, match: SeriesMatch, parts: SeriesMask[], page: Page): boolean {
  if (parts.length > MAX_MERGED_PARTS) return false
  const walked = index.servedSlots(parts.map((entry) => entry.publisher))
  return match.slots * match.slots > (page.offset + page.limit + parts.length) * walked
}

/**
 * The page's slot keys in start order: one walk per part of the slot order (SLOT_ORDER), merged by SQLite (the
 * ORDER BY of a compound SELECT merges its terms' ordered walks, reading each only as far as the page needs).
 * Membership: the parts' member bytes, joined in one blob that each term reads with substr(); an IN list
 * per term would build a temporary table per term, which costs more than the walks when parts are many.
 * Each term's part, id range and place in the blob are bound by position: as named parameters, hundreds of
 * names made and looked up cost about 0.1 ms a search.
 */
function mergedKeys(parts: SeriesMask[], conditions: SlotConditions) {
  const terms = 2 ** Math.ceil(Math.log2(parts.length))
  const byPosition: number[] = []
  let at = 1
  for (let n = 0; n < terms; n++) {
    // Padding terms name no part, so they find nothing.
    const { part, lo, hi } = parts[n] ?? { part: -1, lo: 1, hi: 0 }
    byPosition.push(part, lo, hi, at - lo)
    at += hi - lo + 1
  }
  return {
    sql: mergedSql(terms, conditions.slotSql),
    params: { ...conditions.slotParams, members: Buffer.concat(parts.map((entry) => entry.members)) },
    byPosition,
  }
}

/** The merge's text by number of terms and slot conditions: a few dozen, made once (they run to 100 KB). */
const mergedTexts = new Map<string, string>()

function mergedSql(terms: number, slotSql: string): string {
  const key = `${terms} ${slotSql}`
  let sql = mergedTexts.get(key)
  if (sql === undefined) {
    // Bound by position, in this order: part, lowest and highest id, the blob's offset from an id.
    const term = `SELECT t.series_id, t.status, t.start_ms, t.id FROM ${SLOT_ORDER} t
       WHERE t.part = ? AND ${slotSql} AND t.series_id BETWEEN ? AND ?
         AND substr(@members, t.series_id + ?, 1) = x'01'`
    sql = `${Array.from({ length: terms }, () => term).join('\nUNION ALL\n')}
      ORDER BY start_ms, id LIMIT ${PAGE_LIMIT} OFFSET @offset`
    mergedTexts.set(key, sql)
  }
  return sql
}

interface SlotRowOut {
  series_id: number
  id: string
  status: number
  start_ms: number
  end_ms: number
  booking_link: string | null
  booking_phone: string | null
  capacity: number | null
}

/** A slot as answered: its row, with what its series, group and publisher's sync say (held by the index). */
function toSlot(row: SlotRowOut, series: Series): Record<string, unknown> {
  const { group, sync } = series
  const serviceTypes = summaries.get<Coding[]>(series.serviceTypes)
  const slot: Record<string, unknown> = {
    id: row.id,
    publisher: group.publisher,
    scheduleId: series.scheduleId,
    status: SLOT_STATUSES[row.status],
    start: iso(row.start_ms),
    end: iso(row.end_ms),
  }
  const first = serviceTypes[0]
  if (first) {
    slot.serviceTypeCode = first.code
    if (first.display) slot.serviceTypeText = first.display
  }
  slot.serviceTypes = serviceTypes
  if (series.appointmentType) slot.appointmentType = series.appointmentType
  if (series.accepting) slot.acceptingPatients = series.accepting
  slot.isVirtual = group.isVirtual
  if (row.booking_link) slot.bookingDeepLink = row.booking_link
  if (row.booking_phone) slot.bookingPhone = row.booking_phone
  if (row.capacity !== null) slot.capacity = row.capacity
  slot.location = new RawJson(group.location)
  if (group.provider) slot.provider = new RawJson(group.provider)
  slot.source = {
    publisher: group.publisher,
    resourceId: row.id.slice(slotIdPrefix(group.publisher).length),
    transactionTime: sync.transactionTime,
    syncedAt: sync.syncedAt,
  }
  return slot
}

/** Offsets below this are walked: a walk of a few hundred rows costs less than summing starts per hour. */
const SKIP_FROM_OFFSET = 1000

/**
 * Where a deep page's walk starts: with no latest start, at the last whole hour that does not pass the
 * offset (startTimes.ts), with the offset less the matches before that hour, so the walk reads at most
 * about an hour of matches. Summing hours costs a step per match (per publisher and hour when every series
 * matches), so a match set many times larger than the offset is walked instead.
 */
function pageStart(
  index: SlotIndex,
  match: SeriesMatch,
  filters: SlotFilters,
  page: Page,
  total: number,
): { filters: SlotFilters; page: Page } {
  const unchanged = { filters, page }
  if (page.offset < SKIP_FROM_OFFSET) return unchanged
  // Over every series the moment is found in the served starts, wherever the window ends.
  if (!match.everySeries && (filters.startBefore !== undefined || match.slots > 16 * page.offset))
    return unchanged
  const skip = index.skipAhead(
    match.everySeries ? undefined : match.series,
    match.status,
    total,
    filters.startAfter,
    page.offset,
  )
  if (!skip) return unchanged
  return {
    filters: { ...filters, startAfter: skip.from },
    page: { limit: page.limit, offset: page.offset - skip.skipped },
  }
}

/** A page whose end lies within the first matches of this many times as many series reads only those that can hold it. */
const NARROW_SHARE = 4

/**
 * A page near the start of matches spread over many series (one specialty in every state) reads only the
 * series that can hold it, up to the moment its matches all start before (startTimes.ts): a few dozen
 * series' slots of an hour or so, instead of a walk in every publisher's part to its first member.
 */
function narrowed(
  match: SeriesMatch,
  filters: SlotFilters,
  page: Page,
  nexts: () => number[],
): { match: SeriesMatch; filters: SlotFilters } {
  const unchanged = { match, filters }
  const count = page.offset + page.limit
  if (match.everySeries || filters.startBefore !== undefined) return unchanged
  if (count * NARROW_SHARE > match.series.length) return unchanged
  const first = firstMatches(nexts(), count)
  if (!first) return unchanged
  return {
    match: listedMatch(foundAt(match, first.indexes), match.status),
    filters: { ...filters, startBefore: first.before - 1 },
  }
}

/**
 * One run of a page over every series (SlotIndex.pageRuns): its part's served slots at one start, in id
 * order, past the run's skip. Padded limits, as PAGE_LIMIT.
 */
const RUN_SQL = `SELECT t.series_id, t.id, t.status, t.start_ms, t.end_ms, t.booking_link, t.booking_phone, t.capacity
  FROM (SELECT k.series_id, k.status, k.start_ms, k.id FROM ${SLOT_ORDER} k
        WHERE k.part = @part AND k.status = @status AND k.start_ms = @start AND k.series_id BETWEEN @lo AND @hi
          AND substr(@members, k.series_id - @lo + 1, 1) = x'01'
        ORDER BY k.id LIMIT @take + 0 OFFSET @skip + 0) k
  JOIN sched_slots t ON t.series_id = k.series_id AND t.status = k.status AND t.start_ms = k.start_ms AND t.id = k.id
  ORDER BY t.id`

/** The rows of a page's runs (SlotIndex.pageRuns, pageRunsOf), one seek each. */
function rowsOfRuns(index: SlotIndex, status: number, runs: PageRun[]): SlotRowOut[] {
  const read = index.db.statement(RUN_SQL)
  return runs.flatMap(({ members: { part, lo, hi, members }, start, skip, take }) =>
    read.all({ part, status, start, lo, hi, members, take, skip }),
  ) as SlotRowOut[]
}

/**
 * A search whose only series filters are traits (isVirtual, acceptingPatients), or one listed value alone,
 * answered as one over every series is, from the matching series' starts kept together per publisher: the
 * total is two binary searches a publisher, the page a walk of their starts, whatever the number of series or
 * slots that match, the time asked or the offset. So is one in a window over several values of one listed
 * filter, from the window's starts of their series (SlotIndex.listedSources).
 */
function sourcedSlots(index: SlotIndex, sources: RunSource[], filters: SlotFilters, page: Page) {
  const { startAfter, startBefore } = filters
  let total = 0
  for (const source of sources) total += sourceSlotsWithin(source, startAfter, startBefore)
  if (total <= page.offset) return { slots: [], total }
  const status = statusIndex(filters.status)
  const rows = rowsOfRuns(
    index,
    status,
    pageRunsOf(sources, startAfter, startBefore, page.offset, page.limit),
  )
  return { slots: slotsOf(index, rows), total }
}

/** Every row is of a series the index holds: runs and walks name its series. */
function slotsOf(index: SlotIndex, rows: SlotRowOut[]): Record<string, unknown>[] {
  return rows.map((row) => toSlot(row, index.seriesById(row.series_id) as Series))
}

/**
 * The page's rows of a match of some series by their keys first: merged walks of the parts in start order,
 * or collected and sorted (a match of every series is read by runs of the served starts).
 */
function rowsByKeys(index: SlotIndex, match: SeriesMatch, filters: SlotFilters, page: Page): SlotRowOut[] {
  const conditions = slotConditions(filters)
  // The page is chosen on key columns alone, which both access paths hold: skipping or sorting whole rows
  // cost several times more. Only the page's rows are then read whole.
  const parts = masksBySync(match.series)
  const keys = walksByStart(index, match, parts, page)
    ? mergedKeys(parts, conditions)
    : {
        sql: `SELECT t.series_id, t.status, t.start_ms, t.id FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
              WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${conditions.slotSql}
              ORDER BY t.start_ms, t.id LIMIT ${PAGE_LIMIT} OFFSET @offset`,
        params: { ...conditions.slotParams, ids: match.ids },
        byPosition: [],
      }
  return index.db
    .statement(
      `SELECT t.series_id, t.id, t.status, t.start_ms, t.end_ms, t.booking_link, t.booking_phone, t.capacity
     FROM (${keys.sql}) k
     JOIN sched_slots t ON t.series_id = k.series_id AND t.status = k.status AND t.start_ms = k.start_ms AND t.id = k.id
     ORDER BY t.start_ms, t.id`,
    )
    .all(...keys.byPosition, { ...keys.params, limit: page.limit, offset: page.offset }) as SlotRowOut[]
}

export function searchSlots(index: SlotIndex, filters: SlotFilters, page: Page) {
  const status = statusIndex(filters.status)
  const { startAfter, startBefore } = filters
  // A value's starts are made on the first search over it (a few ms): a first page from now over one value
  // alone is answered as soon from each series' figures, kept from one search to the next (from a moment of
  // the caller's own, they are made again for each series). Several values are answered from their starts.
  const oneValueFromStarts =
    startBefore !== undefined ||
    page.offset >= SKIP_FROM_OFFSET ||
    (startAfter !== undefined && !filters.startsNow)
  const sources =
    index.traitSources(filters, status) ??
    index.listedSources(filters, status, startAfter, startBefore, oneValueFromStarts)
  if (sources) return sourcedSlots(index, sources, filters, page)
  const match = matchSeries(index, filters)
  if (!match) return { slots: [], total: 0 }
  const counted = countBySeriesFigures(index, match, filters)
  const matched = counted === undefined ? matchedSlots(index, match, filters) : undefined
  const total = counted ?? (matched as Matched).total
  if (total <= page.offset) return { slots: [], total }
  const start = pageStart(index, match, filters, page, total)
  // Each series' next match, as counted already when the walk starts where the search asked.
  const nexts = () =>
    (start.filters === filters && matched ? matched : matchedSlots(index, match, start.filters)).nexts
  const walk = narrowed(match, start.filters, start.page, nexts)
  // Every series: the page's runs come from the served starts, one seek each.
  const rows = walk.match.everySeries
    ? rowsOfRuns(
        index,
        match.status,
        index.pageRuns(
          match.status,
          walk.filters.startAfter,
          walk.filters.startBefore,
          start.page.offset,
          start.page.limit,
        ),
      )
    : rowsByKeys(index, walk.match, walk.filters, start.page)
  return { slots: slotsOf(index, rows), total }
}
