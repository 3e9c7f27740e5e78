import { cachedStatement, type Db } from '../db/open.js'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary, SlotStatus } from './resources.js'
import { SLOT_STATUSES } from './resources.js'

/** The filters every slot listing shares; the grouped listings ignore `groupKeys`. */
export interface SlotFilters {
  status: SlotStatus
  publisher?: string
  serviceTypeCode?: string[]
  npi?: string[]
  specialty?: string[]
  appointmentType?: string
  acceptingPatients?: Exclude<AcceptingPatients, 'nopt'>
  isVirtual?: boolean
  city?: string
  state?: string
  /** Epoch ms; slots starting at or after. */
  startAfter?: number
  /** `startAfter` is the request's own moment (no explicit value): only a few matches lie before it. */
  startsNow?: boolean
  /** Epoch ms; slots starting at or before. */
  startBefore?: number
  /** providerLocationKey and actorKey: each given key must match. */
  groupKeys: string[]
}

export interface Page {
  limit: number
  offset: number
}

interface Query {
  /** Selects the ids and sizes of the series that pass every filter but status and time. */
  seriesSql: string
  seriesParams: Record<string, string | number>
  /** Conditions on `t` (sched_slots): status and time. */
  slotSql: string
  slotParams: Record<string, string | number>
}

/**
 * Builds the two halves of every search. The SQL text depends only on which filters are present (lists travel
 * as JSON arrays), so each shape is prepared once and reused.
 */
function buildQuery(filters: SlotFilters): Query {
  const series = [
    'r.publisher IN (SELECT slug FROM publishers WHERE enabled = 1)',
    "(r.accepting IS NULL OR r.accepting <> 'nopt')", // nopt slots are kept but never served
  ]
  const params: Record<string, string | number> = {}
  if (filters.publisher !== undefined) {
    series.push('r.publisher = @publisher')
    params.publisher = filters.publisher
  }
  if (filters.city !== undefined) {
    series.push('r.city = @city')
    params.city = filters.city
  }
  if (filters.state !== undefined) {
    series.push('r.state = @state')
    params.state = filters.state
  }
  if (filters.isVirtual !== undefined) {
    series.push('r.is_virtual = @isVirtual')
    params.isVirtual = filters.isVirtual ? 1 : 0
  }
  if (filters.npi) {
    series.push(
      'r.group_id IN (SELECT group_id FROM sched_group_npis WHERE npi IN (SELECT value FROM json_each(@npi)))',
    )
    params.npi = JSON.stringify(filters.npi)
  }
  if (filters.serviceTypeCode) {
    series.push(
      `r.id IN (SELECT series_id FROM sched_series_codes
                WHERE kind = 's' AND code IN (SELECT value FROM json_each(@serviceTypes)))`,
    )
    params.serviceTypes = JSON.stringify(filters.serviceTypeCode)
  }
  if (filters.specialty) {
    const tokens = filters.specialty.filter((value) => value.includes('|'))
    const codes = filters.specialty.filter((value) => !value.includes('|'))
    series.push(
      `r.id IN (SELECT series_id FROM sched_series_codes WHERE kind = 'p' AND code IN (SELECT value FROM json_each(@specialtyCodes))
                UNION ALL
                SELECT series_id FROM sched_series_codes WHERE kind = 'p' AND token IN (SELECT value FROM json_each(@specialtyTokens)))`,
    )
    params.specialtyCodes = JSON.stringify(codes)
    params.specialtyTokens = JSON.stringify(tokens)
  }
  if (filters.appointmentType !== undefined) {
    series.push('r.appointment_type = @appointmentType')
    params.appointmentType = filters.appointmentType
  }
  if (filters.acceptingPatients !== undefined) {
    // A slot that declares no code matches any requested value.
    series.push('(r.accepting IS NULL OR r.accepting = @accepting)')
    params.accepting = filters.acceptingPatients
  }
  filters.groupKeys.forEach((key, index) => {
    series.push(`r.group_id = (SELECT id FROM sched_groups WHERE key = @key${index})`)
    params[`key${index}`] = key
  })

  const slot = ['t.status = @status']
  const slotParams: Record<string, string | number> = { status: SLOT_STATUSES.indexOf(filters.status) }
  if (filters.startAfter !== undefined) {
    slot.push('t.start_ms >= @startAfter')
    slotParams.startAfter = filters.startAfter
  }
  if (filters.startBefore !== undefined) {
    slot.push('t.start_ms <= @startBefore')
    slotParams.startBefore = filters.startBefore
  }
  return {
    seriesSql: `SELECT r.id, r.group_id, r.group_key, r.${COUNT_COLUMNS[filters.status]}, r.online, r.phone
      FROM sched_series r WHERE ${series.join(' AND ')}`,
    seriesParams: params,
    slotSql: slot.join(' AND '),
    slotParams,
  }
}

const COUNT_COLUMNS: Record<SlotStatus, string> = {
  free: 'free_count',
  busy: 'busy_count',
  'busy-unavailable': 'unavailable_count',
  'busy-tentative': 'tentative_count',
}

/** The slots table's two access paths, named so that each query says which one it walks. */
const BY_SERIES = 'sqlite_autoindex_sched_slots_1' // the primary key: (series_id, status, start_ms, id)
const BY_START = 'sched_slots_by_start' // (status, start_ms, id)

type SeriesRow = [id: number, groupId: number, groupKey: string, slots: number, online: 0 | 1, phone: 0 | 1]

interface SeriesMatch {
  rows: SeriesRow[]
  /** JSON array of series ids, bound as one parameter. */
  ids: string
  /** Slots of the asked status those series hold at any time: the size of the work. */
  slots: number
}

/**
 * Series filters first, in one small query; then the slots of those series by index. SQLite cannot know how
 * many slots a series set holds, so the caller picks the access path from `slots` rather than the planner.
 */
function matchSeries(db: Db, query: Query): SeriesMatch | undefined {
  const rows = cachedStatement(db, query.seriesSql).raw().all(query.seriesParams) as SeriesRow[]
  if (rows.length === 0) return undefined
  let slots = 0
  for (const row of rows) slots += row[3]
  return { rows, ids: JSON.stringify(rows.map((row) => row[0])), slots }
}

const servedSlots = (db: Db) =>
  cachedStatement(db, 'SELECT total(slot_count) FROM publishers WHERE enabled = 1').pluck().get() as number

/**
 * Walking slots in start order and skipping non-members costs about (offset + limit) / density rows;
 * collecting the members' slots and sorting costs about their number. Take the cheaper.
 */
function slotPath(db: Db, match: SeriesMatch, page: Page): string {
  const all = servedSlots(db)
  return match.slots * match.slots > (page.offset + page.limit) * all ? BY_START : BY_SERIES
}

/**
 * A search from a moment on with no end (the default: from now) matches a series' slots of that status
 * minus the few that started before: counting those is cheap whatever the number of matches.
 */
const countsByComplement = (filters: SlotFilters) =>
  filters.startBefore === undefined && (filters.startAfter === undefined || filters.startsNow === true)

/** Matches per series (zero-match series omitted), each with its soonest start. */
function seriesStats(
  db: Db,
  query: Query,
  match: SeriesMatch,
  filters: SlotFilters,
): Map<number, { count: number; next: number }> {
  const params = { ...query.slotParams, ids: match.ids }
  const stats = new Map<number, { count: number; next: number }>()
  if (!countsByComplement(filters)) {
    const rows = cachedStatement(
      db,
      `SELECT t.series_id, count(*), min(t.start_ms) FROM sched_slots t INDEXED BY ${BY_SERIES}
       WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${query.slotSql} GROUP BY t.series_id`,
    )
      .raw()
      .all(params) as [number, number, number][]
    for (const [id, count, next] of rows) stats.set(id, { count, next })
    return stats
  }
  const past = pastCounts(db, params, filters)
  const nexts = cachedStatement(
    db,
    `SELECT j.value, (SELECT t.start_ms FROM sched_slots t INDEXED BY ${BY_SERIES}
                      WHERE t.series_id = j.value AND ${query.slotSql} ORDER BY t.start_ms LIMIT 1)
     FROM json_each(@ids) j`,
  )
    .raw()
    .all(params) as [number, number | null][]
  const slots = new Map(match.rows.map((row) => [row[0], row[3]]))
  for (const [id, next] of nexts) {
    const count = (slots.get(id) ?? 0) - (past.get(id) ?? 0)
    if (next !== null && count > 0) stats.set(id, { count, next })
  }
  return stats
}

/** Slots of the asked status that started before `startAfter`, per series. */
function pastCounts(
  db: Db,
  params: Record<string, string | number>,
  filters: SlotFilters,
): Map<number, number> {
  if (filters.startAfter === undefined) return new Map()
  const rows = cachedStatement(
    db,
    `SELECT t.series_id, count(*) FROM sched_slots t INDEXED BY ${BY_SERIES}
     WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND t.status = @status AND t.start_ms < @startAfter
     GROUP BY t.series_id`,
  )
    .raw()
    .all(params) as [number, number][]
  return new Map(rows)
}

function countMatches(db: Db, query: Query, match: SeriesMatch, filters: SlotFilters) {
  const params = { ...query.slotParams, ids: match.ids }
  if (countsByComplement(filters)) {
    let past = 0
    for (const count of pastCounts(db, params, filters).values()) past += count
    return match.slots - past
  }
  return cachedStatement(
    db,
    `SELECT count(*) FROM sched_slots t INDEXED BY ${BY_SERIES}
     WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${query.slotSql}`,
  )
    .pluck()
    .get(params) as number
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

export function searchSlots(db: Db, filters: SlotFilters, page: Page) {
  const query = buildQuery(filters)
  const match = matchSeries(db, query)
  if (!match) return { slots: [], total: 0 }
  const params = { ...query.slotParams, ids: match.ids }
  const members = 't.series_id IN (SELECT value FROM json_each(@ids))'
  const total = countMatches(db, query, match, filters)
  if (total <= page.offset) return { slots: [], total }
  const rows = cachedStatement(
    db,
    `SELECT t.id, t.status, t.start_ms, t.end_ms, t.booking_link, t.booking_phone, t.capacity,
            r.schedule_id, r.service_types, r.appointment_type, r.accepting,
            g.publisher, g.location, g.provider, g.is_virtual, p.transaction_time, p.synced_at
     FROM (SELECT t.* FROM sched_slots t INDEXED BY ${slotPath(db, match, page)}
           WHERE ${members} AND ${query.slotSql}
           ORDER BY t.start_ms, t.id LIMIT @limit OFFSET @offset) t
     JOIN sched_series r ON r.id = t.series_id
     JOIN sched_groups g ON g.id = r.group_id
     JOIN publishers p ON p.slug = g.publisher
     ORDER BY t.start_ms, t.id`,
  ).all({ ...params, limit: page.limit, offset: page.offset }) as SlotRowOut[]
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
  db: Db,
  filters: SlotFilters,
  page: Page,
): { groups: GroupMatch[]; total: number } {
  const query = buildQuery(filters)
  const match = matchSeries(db, query)
  if (!match) return { groups: [], total: 0 }
  const stats = seriesStats(db, query, match, filters)
  const tallies = new Map<number, GroupTally>()
  for (const [id, groupId, key, , online, phone] of match.rows) {
    const stat = stats.get(id)
    if (!stat) continue
    let tally = tallies.get(groupId)
    if (!tally) {
      tally = { id: groupId, key, count: 0, next: stat.next, online: false, phone: false, series: [] }
      tallies.set(groupId, tally)
    }
    tally.count += stat.count
    tally.next = Math.min(tally.next, stat.next)
    tally.online ||= online === 1
    tally.phone ||= phone === 1
    tally.series.push(id)
  }
  const ordered = [...tallies.values()].sort((a, b) => a.next - b.next || (a.key < b.key ? -1 : 1))
  const pageTallies = ordered.slice(page.offset, page.offset + page.limit)
  if (pageTallies.length === 0) return { groups: [], total: ordered.length }

  const details = new Map(
    (
      cachedStatement(
        db,
        `SELECT id, publisher, location, provider, is_virtual FROM sched_groups
         WHERE id IN (SELECT value FROM json_each(@groups))`,
      ).all({ groups: JSON.stringify(pageTallies.map((tally) => tally.id)) }) as {
        id: number
        publisher: string
        location: string
        provider: string | null
        is_virtual: number
      }[]
    ).map((row) => [row.id, row]),
  )
  // What the matching series of each group on the page declare, for the group's merged attributes.
  const attributes = new Map(
    (
      cachedStatement(
        db,
        `SELECT id, service_types, specialties, accepting FROM sched_series
         WHERE id IN (SELECT value FROM json_each(@series))`,
      ).all({ series: JSON.stringify(pageTallies.flatMap((tally) => tally.series)) }) as {
        id: number
        service_types: string
        specialties: string
        accepting: AcceptingPatients | null
      }[]
    ).map((row) => [row.id, row]),
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

/** Every coding of one kind present in the served series, with its display, sorted by system then code. */
export function listCodings(db: Db, column: 'service_types' | 'specialties'): Coding[] {
  const lists = cachedStatement(
    db,
    `SELECT DISTINCT r.${column} FROM sched_series r
     WHERE r.publisher IN (SELECT slug FROM publishers WHERE enabled = 1)
       AND (r.accepting IS NULL OR r.accepting <> 'nopt')`,
  )
    .pluck()
    .all() as string[]
  return union(lists.map((json) => JSON.parse(json) as Coding[])).sort(
    (a, b) => (a.system ?? '').localeCompare(b.system ?? '') || a.code.localeCompare(b.code),
  )
}
