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
  'appointmentType',
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
 * The listed filters a search asks for (LISTED_FILTERS) when its other series-level filters are traits (a
 * publisher besides); undefined when it asks for none or for another kind (NPIs, group keys: their lists
 * hold a series or a few).
 */
export function listedFiltersAmongTraits(filters: SeriesFilters): IndexedFilter[] | undefined {
  if (filters.groupKeys.length > 0) return undefined
  const listed: IndexedFilter[] = []
  for (const name in SERIES_FILTER_NAMES) {
    if (name === 'publisher' || TRAIT_FILTERS.has(name) || filters[name as keyof SeriesFilters] === undefined)
      continue
    if (!LISTED_FILTERS.has(name)) return undefined
    listed.push(name as IndexedFilter)
  }
  return listed.length > 0 ? listed : undefined
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

/**
 * The filters made ready to test series with, once per search: city and state lower-cased, listed values
 * each once (so that a publisher's lists of them are distinct), specialties split by form.
 */
export interface Wanted extends Omit<SeriesFilters, 'specialty'> {
  specialtyCodes?: string[]
  specialtyTokens?: string[]
}

export function wantedOf({ specialty, ...filters }: SeriesFilters): Wanted {
  const once = (values: string[] | undefined) => values && [...new Set(values)]
  const specialties = once(specialty)
  return {
    ...filters,
    city: filters.city?.toLowerCase(),
    state: filters.state?.toLowerCase(),
    npi: once(filters.npi),
    serviceTypeCode: once(filters.serviceTypeCode),
    specialtyCodes: specialties?.filter((value) => !value.includes('|')),
    specialtyTokens: specialties?.filter((value) => value.includes('|')),
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

/**
 * Whether a series' set holds any of the values. A search may ask for 100: each looked up in each
 * candidate's set cost most of such a search, and so did iterating each set instead. Series with the same
 * codes share one set (sharedSet), a few hundred in all: each is then looked at once per search.
 */
function holdsAnyOf(values: readonly string[]): (set: ReadonlySet<string>) => boolean {
  const inSet = (set: ReadonlySet<string>) => {
    for (const value of values) if (set.has(value)) return true
    return false
  }
  if (values.length <= 4) return inSet
  const known = new Map<ReadonlySet<string>, boolean>()
  return (set) => {
    let holds = known.get(set)
    if (holds === undefined) {
      holds = inSet(set)
      known.set(set, holds)
    }
    return holds
  }
}

/**
 * The filters a series index lists series by (slotIndex.ts): a series found through one meets it (for group
 * keys, the first one asked; every key is still checked).
 */
export type IndexedFilter =
  'state' | 'city' | 'npi' | 'serviceTypeCode' | 'specialty' | 'appointmentType' | 'groupKey'

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

/**
 * The traits a search by traits alone tests (`traitsTest`) as a number below TRAIT_CLASSES: whether the
 * series is virtual, and its patient type. A publisher keeps its starts by class (slotIndex.ts), so that
 * such a search reads the classes it wants instead of gathering its series' starts, and tests a series'
 * traits by its class (`classesPassing`): a trait filter on anything else needs a class of its own.
 */
const PATIENT_TYPES = ACCEPTING_PATIENTS.length + 1
export const TRAIT_CLASSES = 2 * PATIENT_TYPES

export function traitClass(traits: number): number {
  return ((traits & TRAIT.virtual) !== 0 ? PATIENT_TYPES : 0) + (traits >>> ACCEPTING_SHIFT)
}

/** The traits a test of trait filters (`traitsTest`) reads of a series of the class. */
function classTraits(traitClass: number): number {
  const virtual = traitClass >= PATIENT_TYPES ? TRAIT.virtual : 0
  return virtual | ((traitClass % PATIENT_TYPES) << ACCEPTING_SHIFT)
}

/** The trait classes whose series pass a test of trait filters (`traitsTest`), a bit each. */
export function classesPassing(test: (traits: number) => boolean): number {
  let classes = 0
  for (let traitClass = 0; traitClass < TRAIT_CLASSES; traitClass++)
    if (test(classTraits(traitClass))) classes |= 1 << traitClass
  return classes
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
  if (met !== 'appointmentType' && appointmentType !== undefined)
    tests.push((series) => series.appointmentType === appointmentType)
  if (met !== 'npi' && npi) {
    const holdsNpi = holdsAnyOf(npi)
    tests.push((series) => holdsNpi(series.npis))
  }
  if (met !== 'serviceTypeCode' && serviceTypeCode) {
    const holdsService = holdsAnyOf(serviceTypeCode)
    tests.push((series) => holdsService(series.serviceCodes))
  }
  const { specialtyCodes, specialtyTokens } = wanted
  if (met !== 'specialty' && specialtyCodes && specialtyTokens) {
    const holdsCode = holdsAnyOf(specialtyCodes)
    const holdsToken = holdsAnyOf(specialtyTokens)
    tests.push((series) => holdsCode(series.specialtyCodes) || holdsToken(series.specialtyTokens))
  }
  for (const key of wanted.groupKeys.slice(met === 'groupKey' ? 1 : 0))
    tests.push((series) => series.groupKey === key)
  return allOf(tests)
}

/**
 * The columns of sched_series a publisher's series load from, in the order of SeriesRow: read as arrays
 * (better-sqlite3's `raw`), as an object a row with this many named columns cost three times as much to make
 * (a national publisher's 1,000 series: 3 ms against 7-10).
 */
export const SERIES_COLUMNS = `r.id, r.group_id, r.group_key, r.publisher, r.city, r.state, r.is_virtual, r.npis, r.schedule_id,
  r.service_types, r.specialties, r.appointment_type, r.accepting, r.free_count, r.busy_count,
  r.unavailable_count, r.tentative_count, r.free_first, r.busy_first, r.unavailable_first, r.tentative_first,
  r.online, r.phone`

export type SeriesRow = [
  id: number,
  groupId: number,
  groupKey: string,
  publisher: string,
  city: string | null,
  state: string | null,
  isVirtual: number,
  npis: string,
  scheduleId: string,
  serviceTypes: string,
  specialties: string,
  appointmentType: string | null,
  accepting: AcceptingPatients | null,
  freeCount: number,
  busyCount: number,
  unavailableCount: number,
  tentativeCount: number,
  freeFirst: number | null,
  busyFirst: number | null,
  unavailableFirst: number | null,
  tentativeFirst: number | null,
  online: number,
  phone: number,
]

/** What a series' stored specialties say its searches by specialty match. */
interface SpecialtySets {
  specialtyCodes: Set<string>
  /** `system|code` of each specialty. */
  specialtyTokens: Set<string>
}

/**
 * Code sets by their codes, shared by every publisher's series: searches test a set once per search (see
 * holdsAnyOf), so as few as there are distinct combinations of codes (a few hundred nationally; a publisher's
 * own sets were as many as its series' lists, 5,000 in all). Only read; never let go, as the combinations
 * are few.
 */
const CODE_SETS = new Map<string, Set<string>>()

function sharedSet(codes: string[]): Set<string> {
  const key = codes.join('\u0000')
  let set = CODE_SETS.get(key)
  if (!set) {
    set = new Set(codes)
    CODE_SETS.set(key, set)
  }
  return set
}

/**
 * Series are made from their rows (toSeries) with the code sets of their coding lists looked up by text
 * (sharedSet): a publisher's thousand series hold a few dozen distinct lists, and the sets are only read.
 */
export class SeriesMaker {
  readonly #services = new Map<string, Set<string>>()
  readonly #specialties = new Map<string, SpecialtySets>()

  constructor(
    private readonly part: number,
    private readonly sync: SyncDetails,
  ) {}

  toSeries(row: SeriesRow, group: GroupDetails): Series {
    const [
      id,
      ,
      groupKey,
      publisher,
      city,
      state,
      isVirtual,
      npis,
      scheduleId,
      serviceTypes,
      specialties,
      appointmentType,
      accepting,
      freeCount,
      busyCount,
      unavailableCount,
      tentativeCount,
      freeFirst,
      busyFirst,
      unavailableFirst,
      tentativeFirst,
      online,
      phone,
    ] = row
    return {
      id,
      groupKey,
      publisher,
      part: this.part,
      city: city?.toLowerCase(),
      state: state?.toLowerCase(),
      isVirtual: isVirtual === 1,
      npis: new Set(JSON.parse(npis) as string[]),
      serviceCodes: this.#serviceCodes(serviceTypes),
      ...this.#specialtySets(specialties),
      appointmentType,
      accepting,
      counts: [freeCount, busyCount, unavailableCount, tentativeCount],
      firsts: [freeFirst, busyFirst, unavailableFirst, tentativeFirst].map(
        (first) => first ?? Number.POSITIVE_INFINITY,
      ),
      online: online === 1,
      phone: phone === 1,
      scheduleId,
      serviceTypes,
      specialties,
      group,
      sync: this.sync,
    }
  }

  #serviceCodes(text: string): Set<string> {
    let codes = this.#services.get(text)
    if (!codes) {
      codes = sharedSet((JSON.parse(text) as Coding[]).map((coding) => coding.code))
      this.#services.set(text, codes)
    }
    return codes
  }

  #specialtySets(text: string): SpecialtySets {
    let sets = this.#specialties.get(text)
    if (!sets) {
      const specialties = JSON.parse(text) as Coding[]
      sets = {
        specialtyCodes: sharedSet(specialties.map((coding) => coding.code)),
        specialtyTokens: sharedSet(specialties.map((coding) => `${coding.system ?? ''}|${coding.code}`)),
      }
      this.#specialties.set(text, sets)
    }
    return sets
  }
}

export const statusIndex = (status: SlotStatus) => SLOT_STATUSES.indexOf(status)
