import type { AcceptingPatients, Coding, SlotStatus } from '../model.js'
import { ACCEPTING_PATIENTS, SLOT_STATUSES } from '../model.js'

export interface Series {
  id: number
  groupKey: string
  publisher: string
  /** The part of sched_slots its publisher's last sync wrote. */
  part: number
  /** Lower-cased, as city and state match regardless of case. */
  city: string | undefined
  state: string | undefined
  isVirtual: boolean
  npis: Set<string>
  serviceCodes: Set<string>
  specialtyCodes: Set<string>
  /** `system|code` of each specialty. */
  specialtyTokens: Set<string>
  appointmentType: string | null
  accepting: AcceptingPatients | null
  /**
   * Per status, in SLOT_STATUSES order: how many slots, and the first one's start (epoch ms; +Infinity when
   * none). Searches read them as the index packs them per publisher (slotIndex.ts), not from here.
   */
  counts: readonly number[]
  firsts: readonly number[]
  online: boolean
  phone: boolean
  /** What answers show of it, as stored (summaries as JSON text, parsed once by summaries.ts). */
  scheduleId: string
  serviceTypes: string
  specialties: string
  group: GroupDetails
  sync: SyncDetails
}

/** A group's stored details, shared by its series. */
export interface GroupDetails {
  publisher: string
  /** Its place among its publisher's groups, from 0: what a grouped search tallies by (groups.ts). */
  place: number
  location: string
  provider: string | null
  isVirtual: boolean
}

/** The publisher's last sync, shared by its series. */
export interface SyncDetails {
  transactionTime: string
  syncedAt: string
}

export interface SeriesFilters {
  publisher?: string
  serviceTypeCode?: string[]
  npi?: string[]
  specialty?: string[]
  appointmentType?: string
  acceptingPatients?: Exclude<AcceptingPatients, 'nopt'>
  isVirtual?: boolean
  city?: string
  state?: string
  groupKeys: string[]
}

/**
 * Served series, as SQL on `sched_series r`: the publisher is enabled and the patient type is not nopt
 * (such slots are kept but never served). The index holds exactly these.
 */
export const SERVED_SERIES = `r.publisher IN (SELECT slug FROM publishers WHERE enabled = 1)
  AND (r.accepting IS NULL OR r.accepting <> 'nopt')`

/** Every series-level filter by name: a filter added to SeriesFilters must be listed here to compile. */
const SERIES_FILTER_NAMES: Record<Exclude<keyof SeriesFilters, 'groupKeys'>, true> = {
  publisher: true,
  serviceTypeCode: true,
  npi: true,
  specialty: true,
  appointmentType: true,
  acceptingPatients: true,
  isVirtual: true,
  city: true,
  state: true,
}

/** True when the filters name no series-level condition: every served series matches. */
export function filtersNoSeries(filters: SeriesFilters): boolean {
  if (filters.groupKeys.length > 0) return false
  for (const name in SERIES_FILTER_NAMES) if (filters[name as keyof SeriesFilters] !== undefined) return false
  return true
}

/** The filters a series' traits settle alone (`traitsTest`). */
const TRAIT_FILTERS: ReadonlySet<string> = new Set(['isVirtual', 'acceptingPatients'])

/**
 * The key of a search's trait filters when they are its only series-level ones (a publisher besides), at
 * least one given; undefined otherwise. Such filters have a few dozen values in all, statuses included.
 */
export function traitsOnlyKey(filters: SeriesFilters): string | undefined {
  if (filters.groupKeys.length > 0) return undefined
  let key: string | undefined
  for (const name in SERIES_FILTER_NAMES) {
    const value = filters[name as keyof SeriesFilters]
    if (name === 'publisher' || value === undefined) continue
    if (!TRAIT_FILTERS.has(name)) return undefined
    key = `${key ?? ''}${name}=${String(value)};`
  }
  return key
}

/**
 * The filters whose lists a grouped search takes its groups from (listGroups.ts), with nothing left to test
 * on a series. Not NPIs nor group keys: their lists hold a series or a few, as cheap to tally as to keep
 * groups for (and there are as many lists as providers).
 */
const LISTED_FILTERS: ReadonlySet<string> = new Set<IndexedFilter>([
  'state',
  'city',
  'serviceTypeCode',
  'specialty',
])

/**
 * The one series-level filter of a search whose lists settle it alone (LISTED_FILTERS; 'every' for none), a
 * publisher besides; undefined when there are more or another kind.
 */
export function soleListFilter(filters: SeriesFilters): IndexedFilter | 'every' | undefined {
  if (filters.groupKeys.length > 0) return undefined
  let sole: IndexedFilter | 'every' = 'every'
  for (const name in SERIES_FILTER_NAMES) {
    if (name === 'publisher' || filters[name as keyof SeriesFilters] === undefined) continue
    if (sole !== 'every' || !LISTED_FILTERS.has(name)) return undefined
    sole = name as IndexedFilter
  }
  return sole
}

/**
 * Which series of one part (one publisher's last sync) a search wants, as a byte per id from `lo` to `hi`,
 * 1 for a member: what a search merging the parts in start order tests each slot's series against.
 */
export interface SeriesMask {
  part: number
  publisher: string
  lo: number
  hi: number
  members: Buffer
}

/** The masks of the parts the series fall in (an empty list for no series). */
export function masksBySync(series: Series[]): SeriesMask[] {
  const parts = new Map<number, SeriesMask>()
  let current: SeriesMask | undefined
  // The index lists a publisher's series together: a part is looked up only where it changes.
  for (const { part, publisher, id } of series) {
    if (current?.part !== part) {
      current = parts.get(part)
      if (!current) {
        current = { part, publisher, lo: id, hi: id, members: Buffer.alloc(0) }
        parts.set(part, current)
      }
    }
    if (id < current.lo) current.lo = id
    else if (id > current.hi) current.hi = id
  }
  for (const entry of parts.values()) entry.members = Buffer.alloc(entry.hi - entry.lo + 1)
  current = undefined
  for (const { part, id } of series) {
    if (current?.part !== part) current = parts.get(part) as SeriesMask
    current.members[id - current.lo] = 1
  }
  return [...parts.values()]
}

/** The filters made ready to test series with, once per search: city and state lower-cased, specialties split by form. */
export interface Wanted extends Omit<SeriesFilters, 'specialty'> {
  specialtyCodes?: string[]
  specialtyTokens?: string[]
}

export function wantedOf({ specialty, ...filters }: SeriesFilters): Wanted {
  return {
    ...filters,
    city: filters.city?.toLowerCase(),
    state: filters.state?.toLowerCase(),
    specialtyCodes: specialty?.filter((value) => !value.includes('|')),
    specialtyTokens: specialty?.filter((value) => value.includes('|')),
  }
}

/**
 * One test that every one of these passes; undefined for none. Called for thousands of series a search: a
 * closure made per call (`tests.every((test) => test(value))`) was most of what a search allocated.
 */
function allOf<T>(tests: ((value: T) => boolean)[]): ((value: T) => boolean) | undefined {
  if (tests.length <= 1) return tests[0]
  return (value) => {
    for (const test of tests) if (!test(value)) return false
    return true
  }
}

function hasAny(set: ReadonlySet<string>, values: readonly string[]): boolean {
  for (const value of values) if (set.has(value)) return true
  return false
}

/**
 * The filters a series index lists series by (slotIndex.ts): a series found through one meets it (for group
 * keys, the first one asked; every key is still checked).
 */
export type IndexedFilter = 'state' | 'city' | 'npi' | 'serviceTypeCode' | 'specialty' | 'groupKey'

/**
 * What a search tests first of a series, in one number, so that testing thousands reads no object: bit
 * `1 << status` for each status it holds slots of, then TRAIT's bits, then its patient type (1 + its place in
 * ACCEPTING_PATIENTS; 0 when it declares none).
 */
export const TRAIT = { virtual: 1 << 4, online: 1 << 5, phone: 1 << 6 } as const
const ACCEPTING_SHIFT = 8

export function traitsOf(series: Series): number {
  let traits = 0
  series.counts.forEach((count, status) => {
    if (count > 0) traits |= 1 << status
  })
  if (series.isVirtual) traits |= TRAIT.virtual
  if (series.online) traits |= TRAIT.online
  if (series.phone) traits |= TRAIT.phone
  const accepting = series.accepting === null ? 0 : ACCEPTING_PATIENTS.indexOf(series.accepting) + 1
  return traits | (accepting << ACCEPTING_SHIFT)
}

/** The conditions of the filters settled on a series' traits, as one test; undefined when there are none. */
export function traitsTest(wanted: Wanted): ((traits: number) => boolean) | undefined {
  const tests: ((traits: number) => boolean)[] = []
  const { isVirtual, acceptingPatients } = wanted
  if (isVirtual !== undefined) tests.push((traits) => ((traits & TRAIT.virtual) !== 0) === isVirtual)
  if (acceptingPatients !== undefined) {
    const code = ACCEPTING_PATIENTS.indexOf(acceptingPatients) + 1
    // A series that declares no patient type matches any requested value.
    tests.push((traits) => {
      const declared = traits >>> ACCEPTING_SHIFT
      return declared === 0 || declared === code
    })
  }
  return allOf(tests)
}

/**
 * The other conditions of the filters, left to check on a series once its publisher's lists found it
 * (through `met`, whose condition holds; for group keys, the first one asked: every key is still checked),
 * as one test; undefined when none is left, so that a search need not look at the series at all. The
 * publisher is not among them: searches settle it per publisher.
 */
export function seriesTest(wanted: Wanted, met?: IndexedFilter): ((series: Series) => boolean) | undefined {
  const tests: ((series: Series) => boolean)[] = []
  const { state, city, appointmentType, npi, serviceTypeCode } = wanted
  if (met !== 'state' && state !== undefined) tests.push((series) => series.state === state)
  if (met !== 'city' && city !== undefined) tests.push((series) => series.city === city)
  if (appointmentType !== undefined) tests.push((series) => series.appointmentType === appointmentType)
  if (met !== 'npi' && npi) tests.push((series) => hasAny(series.npis, npi))
  if (met !== 'serviceTypeCode' && serviceTypeCode)
    tests.push((series) => hasAny(series.serviceCodes, serviceTypeCode))
  const { specialtyCodes, specialtyTokens } = wanted
  if (met !== 'specialty' && specialtyCodes && specialtyTokens) {
    tests.push(
      (series) =>
        hasAny(series.specialtyCodes, specialtyCodes) || hasAny(series.specialtyTokens, specialtyTokens),
    )
  }
  for (const key of wanted.groupKeys.slice(met === 'groupKey' ? 1 : 0))
    tests.push((series) => series.groupKey === key)
  return allOf(tests)
}

export interface SeriesRow {
  id: number
  group_id: number
  group_key: string
  publisher: string
  city: string | null
  state: string | null
  is_virtual: number
  npis: string
  schedule_id: string
  service_types: string
  specialties: string
  appointment_type: string | null
  accepting: AcceptingPatients | null
  free_count: number
  busy_count: number
  unavailable_count: number
  tentative_count: number
  free_first: number | null
  busy_first: number | null
  unavailable_first: number | null
  tentative_first: number | null
  online: number
  phone: number
}

export function toSeries(row: SeriesRow, part: number, group: GroupDetails, sync: SyncDetails): Series {
  const serviceTypes = JSON.parse(row.service_types) as Coding[]
  const specialties = JSON.parse(row.specialties) as Coding[]
  return {
    id: row.id,
    groupKey: row.group_key,
    publisher: row.publisher,
    part,
    city: row.city?.toLowerCase(),
    state: row.state?.toLowerCase(),
    isVirtual: row.is_virtual === 1,
    npis: new Set(JSON.parse(row.npis) as string[]),
    serviceCodes: new Set(serviceTypes.map((coding) => coding.code)),
    specialtyCodes: new Set(specialties.map((coding) => coding.code)),
    specialtyTokens: new Set(specialties.map((coding) => `${coding.system ?? ''}|${coding.code}`)),
    appointmentType: row.appointment_type,
    accepting: row.accepting,
    counts: [row.free_count, row.busy_count, row.unavailable_count, row.tentative_count],
    firsts: [row.free_first, row.busy_first, row.unavailable_first, row.tentative_first].map(
      (first) => first ?? Number.POSITIVE_INFINITY,
    ),
    online: row.online === 1,
    phone: row.phone === 1,
    scheduleId: row.schedule_id,
    serviceTypes: row.service_types,
    specialties: row.specialties,
    group,
    sync,
  }
}

export const statusIndex = (status: SlotStatus) => SLOT_STATUSES.indexOf(status)
