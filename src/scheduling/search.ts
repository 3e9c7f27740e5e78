import type { Db } from '../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary, SlotStatus } from './resources.js'
import { SLOT_STATUSES } from './resources.js'
import { SLOTS_BY_SERIES, SLOTS_BY_START } from './schema.js'
import { firstMatches, skipAhead } from './startHours.js'
import {
  filtersNoSeries,
  membersByPart,
  type PartMembers,
  SERVED_SERIES,
  type Series,
  type SeriesFilters,
  type SeriesIndex,
  statusIndex,
} from './seriesIndex.js'

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
interface SlotConditions {
  slotSql: string
  slotParams: Record<string, string | number>
}

function slotConditions(filters: SlotFilters): SlotConditions {
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
 * A compound SELECT has at most 500 terms (SQLite's limit). The merge pads its parts to a power of two, so
 * that a few statements serve every number of parts; 256 is the largest that fits.
 */
const MAX_MERGED_PARTS = 256

/**
 * SQLite reads a LIMIT that is a bare parameter as a constant when it plans, so binding it again makes the
 * statement be planned again on its next run: for a merge of 64 parts, 0.4 ms a search. An expression is not.
 */
const PAGE_LIMIT = '@limit + 0'

interface SeriesMatch {
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
function listedMatch(series: Series[], status: number): SeriesMatch {
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

function matchSeries(index: SeriesIndex, filters: SlotFilters): SeriesMatch | undefined {
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
 * The condition a slot `t` of the match meets. Naming every series in a list costs in proportion to the
 * series (a national unfiltered search names 50,000: 25 ms); when all served ones match, each slot walked
 * is checked against its series row instead, and a page walks few.
 */
function memberCondition(match: SeriesMatch): string {
  return match.everySeries
    ? `EXISTS (SELECT 1 FROM sched_series r WHERE r.id = t.series_id AND ${SERVED_SERIES})`
    : 't.series_id IN (SELECT value FROM json_each(@ids))'
}

/**
 * Walking the matching parts' slots in start order and skipping non-members costs about
 * (offset + limit + parts) / density rows, density being the matches' share of those parts' slots;
 * collecting the members' slots and sorting costs about their number. Take the cheaper.
 */
function walksByStart(index: SeriesIndex, match: SeriesMatch, parts: PartMembers[], page: Page): boolean {
  if (parts.length > MAX_MERGED_PARTS) return false
  const walked = index.servedSlots(parts.map((entry) => entry.publisher))
  return match.slots * match.slots > (page.offset + page.limit + parts.length) * walked
}

/**
 * The page's slot keys in start order: one walk per part of the by-start index, merged by SQLite (the
 * ORDER BY of a compound SELECT merges its terms' ordered walks, reading each only as far as the page needs).
 * Membership: the parts' member bytes, joined in one blob that each term reads with substr(); an IN list
 * per term would build a temporary table per term, which costs more than the walks when parts are many.
 */
function mergedKeys(parts: PartMembers[], conditions: SlotConditions) {
  const params: Record<string, number | Buffer> = {
    ...conditions.slotParams,
    members: Buffer.concat(parts.map((entry) => entry.members)),
  }
  const terms = 2 ** Math.ceil(Math.log2(parts.length))
  let at = 1
  for (let n = 0; n < terms; n++) {
    // Padding terms name no part, so they find nothing.
    const { part, lo, hi } = parts[n] ?? { part: -1, lo: 1, hi: 0 }
    Object.assign(params, { [`part${n}`]: part, [`lo${n}`]: lo, [`hi${n}`]: hi, [`at${n}`]: at })
    at += hi - lo + 1
  }
  return { sql: mergedSql(terms, conditions.slotSql), params }
}

/** The merge's text by number of terms and slot conditions: a few dozen, made once (they run to 100 KB). */
const mergedTexts = new Map<string, string>()

function mergedSql(terms: number, slotSql: string): string {
  const key = `${terms} ${slotSql}`
  let sql = mergedTexts.get(key)
  if (sql === undefined) {
    const term = (n: number) =>
      `SELECT t.series_id, t.status, t.start_ms, t.id FROM sched_slots t INDEXED BY ${SLOTS_BY_START}
       WHERE t.part = @part${n} AND ${slotSql} AND t.series_id BETWEEN @lo${n} AND @hi${n}
         AND substr(@members, t.series_id - @lo${n} + @at${n}, 1) = x'01'`
    sql = `${Array.from({ length: terms }, (_, n) => term(n)).join('\nUNION ALL\n')}
      ORDER BY start_ms, id LIMIT ${PAGE_LIMIT} OFFSET @offset`
    mergedTexts.set(key, sql)
  }
  return sql
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

function countMatches(
  index: SeriesIndex,
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
function seriesStats(
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

interface SlotRowOut {
  id: string
  status: number
  start_ms: number
  end_ms: number
  booking_link: string | null
  booking_phone: string | null
  capacity: number | null
  schedule_id: string
  service_types: string
  appointment_type: string | null
  accepting: AcceptingPatients | null
  publisher: string
  location: string
  provider: string | null
  is_virtual: number
  transaction_time: string
  synced_at: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Parses each group's summaries once per response, however many of its slots the page holds. */
class SummaryCache {
  readonly #cache = new Map<string, unknown>()
  get<T>(json: string): T {
    let value = this.#cache.get(json)
    if (value === undefined) {
      value = JSON.parse(json)
      this.#cache.set(json, value)
    }
    return value as T
  }
}

function toSlot(row: SlotRowOut, summaries: SummaryCache): Record<string, unknown> {
  const serviceTypes = summaries.get<Coding[]>(row.service_types)
  const resourceId = row.id.slice(row.publisher.length + 1)
  const slot: Record<string, unknown> = {
    id: row.id,
    publisher: row.publisher,
    scheduleId: row.schedule_id,
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
  if (row.appointment_type) slot.appointmentType = row.appointment_type
  if (row.accepting) slot.acceptingPatients = row.accepting
  slot.isVirtual = row.is_virtual === 1
  if (row.booking_link) slot.bookingDeepLink = row.booking_link
  if (row.booking_phone) slot.bookingPhone = row.booking_phone
  if (row.capacity !== null) slot.capacity = row.capacity
  slot.location = summaries.get<LocationSummary>(row.location)
  if (row.provider) slot.provider = summaries.get<ProviderSummary>(row.provider)
  slot.source = {
    publisher: row.publisher,
    resourceId,
    transactionTime: row.transaction_time,
    syncedAt: row.synced_at,
  }
  return slot
}

/** Offsets below this are walked: a walk of a few hundred rows costs less than summing hours. */
const SKIP_FROM_OFFSET = 1000

/**
 * Where a deep page's walk starts: with no latest start, at the last whole hour that does not pass the
 * offset (startHours.ts), with the offset less the matches before that hour, so the walk reads at most
 * about an hour of matches. Summing hours costs a step per match (per publisher and hour when every series
 * matches), so a match set many times larger than the offset is walked instead.
 */
function pageStart(
  index: SeriesIndex,
  match: SeriesMatch,
  filters: SlotFilters,
  page: Page,
  total: number,
): { filters: SlotFilters; page: Page } {
  const unchanged = { filters, page }
  if (page.offset < SKIP_FROM_OFFSET || filters.startBefore !== undefined) return unchanged
  if (!match.everySeries && match.slots > 16 * page.offset) return unchanged
  const skip = match.everySeries
    ? skipAhead([], index.servedHours(match.status), total, filters.startAfter, page.offset)
    : skipAhead(index.hoursOf(match.series, match.status), [], total, filters.startAfter, page.offset)
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
 * series that can hold it, up to the moment its matches all start before (startHours.ts): a few dozen
 * series' slots of an hour or so, instead of a walk in every publisher's part to its first member.
 */
function narrowed(
  index: SeriesIndex,
  match: SeriesMatch,
  filters: SlotFilters,
  page: Page,
): { match: SeriesMatch; filters: SlotFilters } {
  const unchanged = { match, filters }
  const count = page.offset + page.limit
  if (match.everySeries || filters.startBefore !== undefined) return unchanged
  if (count * NARROW_SHARE > match.series.length) return unchanged
  const hours = index.hoursOf(match.series, match.status)
  const first = firstMatches(hours, filters.startAfter, count)
  if (!first) return unchanged
  return {
    match: listedMatch(
      first.indexes.map((index) => match.series[index] as Series),
      match.status,
    ),
    filters: { ...filters, startBefore: first.before - 1 },
  }
}

export function searchSlots(index: SeriesIndex, filters: SlotFilters, page: Page) {
  const { db } = index
  const match = matchSeries(index, filters)
  if (!match) return { slots: [], total: 0 }
  const total = countMatches(index, match, filters, slotConditions(filters))
  if (total <= page.offset) return { slots: [], total }
  const start = pageStart(index, match, filters, page, total)
  const walk = narrowed(index, match, start.filters, start.page)
  const conditions = slotConditions(walk.filters)
  // The page is chosen on key columns alone, which both access paths hold: skipping or sorting whole rows
  // cost several times more. Only the page's rows are then read whole.
  // Every served series matches an unfiltered search: the index keeps their members made.
  const parts = walk.match.everySeries ? index.allMembers() : membersByPart(walk.match.series)
  const keys = walksByStart(index, walk.match, parts, start.page)
    ? mergedKeys(parts, conditions)
    : {
        sql: `SELECT t.series_id, t.status, t.start_ms, t.id FROM sched_slots t INDEXED BY ${SLOTS_BY_SERIES}
              WHERE ${memberCondition(walk.match)} AND ${conditions.slotSql}
              ORDER BY t.start_ms, t.id LIMIT ${PAGE_LIMIT} OFFSET @offset`,
        params: walk.match.everySeries
          ? conditions.slotParams
          : { ...conditions.slotParams, ids: walk.match.ids },
      }
  const rows = db
    .statement(
      `SELECT t.id, t.status, t.start_ms, t.end_ms, t.booking_link, t.booking_phone, t.capacity,
            r.schedule_id, r.service_types, r.appointment_type, r.accepting,
            g.publisher, g.location, g.provider, g.is_virtual, p.transaction_time, p.synced_at
     FROM (${keys.sql}) k
     JOIN sched_slots t ON t.series_id = k.series_id AND t.status = k.status AND t.start_ms = k.start_ms AND t.id = k.id
     JOIN sched_series r ON r.id = t.series_id
     JOIN sched_groups g ON g.id = r.group_id
     JOIN publishers p ON p.slug = g.publisher
     ORDER BY t.start_ms, t.id`,
    )
    .all({ ...keys.params, limit: page.limit, offset: start.page.offset }) as SlotRowOut[]
  const summaries = new SummaryCache()
  return { slots: rows.map((row) => toSlot(row, summaries)), total }
}

export interface GroupMatch {
  key: string
  publisher: string
  location: LocationSummary
  provider?: ProviderSummary
  isVirtual: boolean
  serviceTypes: Coding[]
  specialties: Coding[]
  acceptingPatients?: AcceptingPatients
  bookingMethod?: 'online' | 'phone'
  nextAvailableStart: string
  totalSlots: number
}

function union(lists: Coding[][]): Coding[] {
  const seen = new Map<string, Coding>()
  for (const coding of lists.flat()) seen.set(`${coding.system ?? ''}|${coding.code}`, coding)
  return [...seen.values()]
}

/** The rows of a table whose ids are given, by id: `select` names the table and columns, `id` first. */
function rowsById<T>(db: Db, select: string, ids: number[]): Map<number, T & { id: number }> {
  const rows = db
    .statement(`${select} WHERE id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as (T & { id: number })[]
  return new Map(rows.map((row) => [row.id, row]))
}

interface GroupTally {
  id: number
  key: string
  count: number
  next: number
  online: boolean
  phone: boolean
  series: number[]
}

/**
 * The same matches grouped by provider at a location, ordered by soonest availability then key; `total` and
 * paging count groups. Groups are tallied from per-series figures, so the work follows the number of series,
 * not of slots.
 */
export function searchGroups(
  index: SeriesIndex,
  filters: SlotFilters,
  page: Page,
): { groups: GroupMatch[]; total: number } {
  const { db } = index
  const match = matchSeries(index, filters)
  if (!match) return { groups: [], total: 0 }
  const stats = seriesStats(db, match, filters, slotConditions(filters))
  const tallies = new Map<number, GroupTally>()
  for (const series of match.series) {
    const stat = stats.get(series.id)
    if (!stat) continue
    let tally = tallies.get(series.groupId)
    if (!tally) {
      tally = {
        id: series.groupId,
        key: series.groupKey,
        count: 0,
        next: stat.next,
        online: false,
        phone: false,
        series: [],
      }
      tallies.set(series.groupId, tally)
    }
    tally.count += stat.count
    tally.next = Math.min(tally.next, stat.next)
    tally.online ||= series.online
    tally.phone ||= series.phone
    tally.series.push(series.id)
  }
  const ordered = [...tallies.values()].sort((a, b) => a.next - b.next || (a.key < b.key ? -1 : 1))
  const pageTallies = ordered.slice(page.offset, page.offset + page.limit)
  if (pageTallies.length === 0) return { groups: [], total: ordered.length }

  const details = rowsById<{
    publisher: string
    location: string
    provider: string | null
    is_virtual: number
  }>(
    db,
    'SELECT id, publisher, location, provider, is_virtual FROM sched_groups',
    pageTallies.map((tally) => tally.id),
  )
  // What the matching series of each group on the page declare, for the group's merged attributes.
  const attributes = rowsById<{
    service_types: string
    specialties: string
    accepting: AcceptingPatients | null
  }>(
    db,
    'SELECT id, service_types, specialties, accepting FROM sched_series',
    pageTallies.flatMap((tally) => tally.series),
  )
  const summaries = new SummaryCache()
  const groups = pageTallies.map((tally): GroupMatch => {
    const detail = details.get(tally.id)
    if (!detail) throw new Error(`group ${tally.id} vanished mid-read`)
    const series = tally.series.flatMap((id) => attributes.get(id) ?? [])
    const accepting = new Set(series.map((entry) => entry.accepting))
    const group: GroupMatch = {
      key: tally.key,
      publisher: detail.publisher,
      location: summaries.get<LocationSummary>(detail.location),
      isVirtual: detail.is_virtual === 1,
      serviceTypes: union(series.map((entry) => summaries.get<Coding[]>(entry.service_types))),
      specialties: union(series.map((entry) => summaries.get<Coding[]>(entry.specialties))),
      nextAvailableStart: iso(tally.next),
      totalSlots: tally.count,
    }
    if (detail.provider) group.provider = summaries.get<ProviderSummary>(detail.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) group.acceptingPatients = only
    if (tally.online) group.bookingMethod = 'online'
    else if (tally.phone) group.bookingMethod = 'phone'
    return group
  })
  return { groups, total: ordered.length }
}

/**
 * When a search from now stops answering as it does now: at the first start of a slot of `status` from
 * `now` on, since no match can start in between. Undefined when none is left: only new data changes it.
 */
export function answerHoldsThrough(
  index: SeriesIndex,
  filters: SlotFilters,
  now: number,
): number | undefined {
  if (!filters.startsNow) return undefined
  // The first served slot of the status from now on, whatever the filters: no match can start before it.
  return index.servedFrom(statusIndex(filters.status), now).next ?? undefined
}

/** Every coding of one kind present in the served series, with its display, sorted by system then code. */
export function listCodings(db: Db, column: 'service_types' | 'specialties'): Coding[] {
  const lists = db
    .statement(`SELECT DISTINCT r.${column} FROM sched_series r WHERE ${SERVED_SERIES}`)
    .pluck()
    .all() as string[]
  return union(lists.map((json) => JSON.parse(json) as Coding[])).sort(
    (a, b) => (a.system ?? '').localeCompare(b.system ?? '') || a.code.localeCompare(b.code),
  )
}
