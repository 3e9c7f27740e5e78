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
    seriesSql: `SELECT r.id, r.slot_count FROM sched_series r WHERE ${series.join(' AND ')}`,
    seriesParams: params,
    slotSql: slot.join(' AND '),
    slotParams,
  }
}

/** The slots table's two access paths, named so that each query says which one it walks. */
const BY_SERIES = 'sqlite_autoindex_sched_slots_1' // the primary key: (series_id, status, start_ms, id)
const BY_START = 'sched_slots_by_start' // (status, start_ms, id)

interface SeriesMatch {
  /** JSON array of series ids, bound as one parameter. */
  ids: string
  /** Slots held by those series, before the status and time filters: the size of the work. */
  slots: number
}

/**
 * Series filters first, in one small query; then the slots of those series by index. SQLite cannot know how
 * many slots a series set holds, so the caller picks the access path from `slots` rather than the planner.
 */
function matchSeries(db: Db, query: Query): SeriesMatch | undefined {
  const rows = cachedStatement(db, query.seriesSql).raw().all(query.seriesParams) as [number, number][]
  if (rows.length === 0) return undefined
  let slots = 0
  for (const row of rows) slots += row[1]
  return { ids: JSON.stringify(rows.map((row) => row[0])), slots }
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
  const total = cachedStatement(
    db,
    `SELECT count(*) FROM sched_slots t INDEXED BY ${BY_SERIES} WHERE ${members} AND ${query.slotSql}`,
  )
    .pluck()
    .get(params) as number
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

interface GroupRowOut {
  gid: number
  n: number
  next: number
  online: number
  phone: number
  total: number
  key: string
  publisher: string
  location: string
  provider: string | null
  is_virtual: number
}

function union(lists: Coding[][]): Coding[] {
  const seen = new Map<string, Coding>()
  for (const coding of lists.flat()) seen.set(`${coding.system ?? ''}|${coding.code}`, coding)
  return [...seen.values()]
}

/**
 * The same matches grouped by provider at a location, ordered by soonest availability then key; `total` and
 * paging count groups.
 */
export function searchGroups(
  db: Db,
  filters: SlotFilters,
  page: Page,
): { groups: GroupMatch[]; total: number } {
  const query = buildQuery(filters)
  const match = matchSeries(db, query)
  if (!match) return { groups: [], total: 0 }
  const params = { ...query.slotParams, ids: match.ids }
  const matched = `SELECT r.group_id AS gid, count(*) AS n, min(t.start_ms) AS next,
      max(t.booking_link IS NOT NULL) AS online, max(t.booking_phone IS NOT NULL) AS phone
    FROM sched_slots t INDEXED BY ${BY_SERIES} JOIN sched_series r ON r.id = t.series_id
    WHERE t.series_id IN (SELECT value FROM json_each(@ids)) AND ${query.slotSql}
    GROUP BY r.group_id`
  const rows = cachedStatement(
    db,
    `SELECT m.*, count(*) OVER () AS total, g.key, g.publisher, g.location, g.provider, g.is_virtual
     FROM (${matched}) m JOIN sched_groups g ON g.id = m.gid
     ORDER BY m.next, g.key LIMIT @limit OFFSET @offset`,
  ).all({ ...params, limit: page.limit, offset: page.offset }) as GroupRowOut[]
  const total =
    rows[0]?.total ?? (cachedStatement(db, `SELECT count(*) FROM (${matched})`).pluck().get(params) as number)
  if (rows.length === 0) return { groups: [], total }

  // What the matching series of each group on the page declare, for the group's merged attributes.
  const attributes = cachedStatement(
    db,
    `SELECT r.group_id AS gid, r.service_types, r.specialties, r.accepting FROM sched_series r
     WHERE r.group_id IN (SELECT value FROM json_each(@groups)) AND r.id IN (SELECT value FROM json_each(@ids))
       AND EXISTS (SELECT 1 FROM sched_slots t WHERE t.series_id = r.id AND ${query.slotSql})`,
  ).all({ ...params, groups: JSON.stringify(rows.map((row) => row.gid)) }) as {
    gid: number
    service_types: string
    specialties: string
    accepting: AcceptingPatients | null
  }[]
  const summaries = new SummaryCache()
  const groups = rows.map((row): GroupMatch => {
    const series = attributes.filter((entry) => entry.gid === row.gid)
    const accepting = new Set(series.map((entry) => entry.accepting))
    const group: GroupMatch = {
      key: row.key,
      publisher: row.publisher,
      location: summaries.get<LocationSummary>(row.location),
      isVirtual: row.is_virtual === 1,
      serviceTypes: union(series.map((entry) => summaries.get<Coding[]>(entry.service_types))),
      specialties: union(series.map((entry) => summaries.get<Coding[]>(entry.specialties))),
      nextAvailableStart: iso(row.next),
      totalSlots: row.n,
    }
    if (row.provider) group.provider = summaries.get<ProviderSummary>(row.provider)
    const [only] = accepting
    if (accepting.size === 1 && only) group.acceptingPatients = only
    if (row.online) group.bookingMethod = 'online'
    else if (row.phone) group.bookingMethod = 'phone'
    return group
  })
  return { groups, total }
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
