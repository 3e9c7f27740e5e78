import type { Db } from '../db/open.js'
import { type Tally, tallyAt } from './partTally.js'
import { type Histogram, loadHours, type PartHours } from './startHours.js'
import type { AcceptingPatients, Coding, SlotStatus } from './resources.js'
import { SLOT_STATUSES } from './resources.js'

/**
 * Every served series held in memory, indexed by what searches filter on. Series are few (one per schedule
 * and attribute set: tens of thousands nationally) while slots are millions, so a search settles its series
 * here in microseconds and reads only slots from SQLite. Each publisher is a partition, reloaded when a
 * sync of it commits (each takes a new slot part) or its `enabled` flag changes, by whichever process: every
 * search compares them.
 */

export interface Series {
  id: number
  groupId: number
  groupKey: string
  publisher: string
  /** The part of sched_slots that its publisher's last sync wrote (see migration 5). */
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
  /** Per status, in SLOT_STATUSES order: how many slots, and the first one's start (epoch ms) or null. */
  counts: number[]
  firsts: (number | null)[]
  online: boolean
  phone: boolean
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

/**
 * Series of one part of the slots (one publisher's last sync) as a byte per id from `lo` to `hi`, 1 for a
 * member: what a search merging the parts in start order tests each slot's series against.
 */
export interface PartMembers {
  part: number
  publisher: string
  lo: number
  hi: number
  members: Buffer
}

/** The members of each part the series fall in (an empty list for no series). */
export function membersByPart(series: Series[]): PartMembers[] {
  const parts = new Map<number, PartMembers>()
  let current: PartMembers | undefined
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
    if (current?.part !== part) current = parts.get(part) as PartMembers
    current.members[id - current.lo] = 1
  }
  return [...parts.values()]
}

class Partition {
  readonly all: Series[] = []
  /** Slots of every status the partition's series hold: the size of a search over all of them. */
  slots = 0
  /** Per status, in SLOT_STATUSES order: slots of it the partition's series hold. */
  readonly statusSlots = SLOT_STATUSES.map(() => 0)
  readonly byState = new Map<string, Series[]>()
  readonly byCity = new Map<string, Series[]>()
  readonly byNpi = new Map<string, Series[]>()
  readonly byServiceCode = new Map<string, Series[]>()
  readonly bySpecialtyCode = new Map<string, Series[]>()
  readonly bySpecialtyToken = new Map<string, Series[]>()
  readonly byGroupKey = new Map<string, Series[]>()

  #members: PartMembers[] | undefined
  /** Per status: its slots counted at the moment of the last search from a moment (see partTally.ts). */
  readonly #tallies: (Tally | undefined)[] = []
  /** Per status: its slots' start hours, read by the first deep page (see startHours.ts). */
  readonly #hours: (PartHours | undefined)[] = []

  constructor(readonly part: number) {}

  /** All its series as members, made on first use: what every unfiltered search merges. */
  members(): PartMembers[] {
    this.#members ??= membersByPart(this.all)
    return this.#members
  }

  /** Its slots of the status from `moment` on, kept for the next search; undefined when it serves none. */
  tally(db: Db, status: number, moment: number): Tally | undefined {
    const [served] = this.members()
    if (served === undefined) return undefined
    const tally = tallyAt(db, served, status, moment, this.#tallies[status])
    this.#tallies[status] = tally
    return tally
  }

  hours(db: Db, status: number): PartHours {
    let hours = this.#hours[status]
    if (!hours) {
      const [served] = this.members()
      hours = served
        ? loadHours(
            db,
            served,
            status,
            this.all.map((series) => series.id),
          )
        : { bySeries: new Map(), served: { first: 0, counts: new Int32Array(0) } }
      this.#hours[status] = hours
    }
    return hours
  }

  add(series: Series) {
    this.all.push(series)
    series.counts.forEach((count, status) => {
      this.slots += count
      this.statusSlots[status] = (this.statusSlots[status] as number) + count
    })
    if (series.state) push(this.byState, series.state, series)
    if (series.city) push(this.byCity, series.city, series)
    for (const npi of series.npis) push(this.byNpi, npi, series)
    for (const code of series.serviceCodes) push(this.byServiceCode, code, series)
    for (const code of series.specialtyCodes) push(this.bySpecialtyCode, code, series)
    for (const token of series.specialtyTokens) push(this.bySpecialtyToken, token, series)
    push(this.byGroupKey, series.groupKey, series)
  }

  /** The smallest list that surely holds every match, each series once: the most selective indexed filter's. */
  candidates(wanted: Wanted): Series[] {
    let smallest = this.all
    const consider = (lists: (Series[] | undefined)[]) => {
      let size = 0
      for (const list of lists) size += list?.length ?? 0
      // A union's size is at most the sum of its lists': one that cannot be smaller is not made.
      if (size < smallest.length) smallest = union(lists)
    }
    const lookUp = (index: Map<string, Series[]>, keys: string[]) => keys.map((key) => index.get(key))
    if (wanted.state !== undefined) consider([this.byState.get(wanted.state)])
    if (wanted.city !== undefined) consider([this.byCity.get(wanted.city)])
    if (wanted.npi) consider(lookUp(this.byNpi, wanted.npi))
    if (wanted.serviceTypeCode) consider(lookUp(this.byServiceCode, wanted.serviceTypeCode))
    if (wanted.specialtyCodes && wanted.specialtyTokens) {
      consider([
        ...lookUp(this.bySpecialtyCode, wanted.specialtyCodes),
        ...lookUp(this.bySpecialtyToken, wanted.specialtyTokens),
      ])
    }
    if (wanted.groupKeys[0] !== undefined) consider([this.byGroupKey.get(wanted.groupKeys[0])])
    return smallest
  }
}

const NONE: Series[] = []

/** Every series of the lists once: a series can be listed under several of the values asked for. */
function union(lists: (Series[] | undefined)[]): Series[] {
  if (lists.length === 1) return lists[0] ?? NONE
  return [...new Set(lists.flatMap((list) => list ?? NONE))]
}

function push<T>(map: Map<string, T[]>, key: string, value: T) {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

/** The filters made ready to test series with, once per search: city and state lower-cased, specialties split by form. */
interface Wanted extends Omit<SeriesFilters, 'specialty'> {
  specialtyCodes?: string[]
  specialtyTokens?: string[]
}

function wantedOf({ specialty, ...filters }: SeriesFilters): Wanted {
  return {
    ...filters,
    city: filters.city?.toLowerCase(),
    state: filters.state?.toLowerCase(),
    specialtyCodes: specialty?.filter((value) => !value.includes('|')),
    specialtyTokens: specialty?.filter((value) => value.includes('|')),
  }
}

function hasAny(set: ReadonlySet<string>, values: readonly string[]): boolean {
  for (const value of values) if (set.has(value)) return true
  return false
}

/** Every condition of the filters, checked on one series. */
function matches(series: Series, wanted: Wanted): boolean {
  if (wanted.publisher !== undefined && series.publisher !== wanted.publisher) return false
  if (wanted.state !== undefined && series.state !== wanted.state) return false
  if (wanted.city !== undefined && series.city !== wanted.city) return false
  if (wanted.isVirtual !== undefined && series.isVirtual !== wanted.isVirtual) return false
  if (wanted.appointmentType !== undefined && series.appointmentType !== wanted.appointmentType) return false
  // A series that declares no patient type matches any requested value.
  if (wanted.acceptingPatients !== undefined && series.accepting !== null) {
    if (series.accepting !== wanted.acceptingPatients) return false
  }
  if (wanted.npi && !hasAny(series.npis, wanted.npi)) return false
  if (wanted.serviceTypeCode && !hasAny(series.serviceCodes, wanted.serviceTypeCode)) return false
  if (
    wanted.specialtyCodes &&
    wanted.specialtyTokens &&
    !hasAny(series.specialtyCodes, wanted.specialtyCodes) &&
    !hasAny(series.specialtyTokens, wanted.specialtyTokens)
  ) {
    return false
  }
  return wanted.groupKeys.every((key) => series.groupKey === key)
}

interface SeriesRow {
  id: number
  group_id: number
  group_key: string
  publisher: string
  city: string | null
  state: string | null
  is_virtual: number
  npis: string
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

function toSeries(row: SeriesRow, part: number): Series {
  const serviceTypes = JSON.parse(row.service_types) as Coding[]
  const specialties = JSON.parse(row.specialties) as Coding[]
  return {
    id: row.id,
    groupId: row.group_id,
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
    firsts: [row.free_first, row.busy_first, row.unavailable_first, row.tentative_first],
    online: row.online === 1,
    phone: row.phone === 1,
  }
}

export const statusIndex = (status: SlotStatus) => SLOT_STATUSES.indexOf(status)

export class SeriesIndex {
  readonly #partitions = new Map<string, Partition>()
  #generation = -1

  constructor(readonly db: Db) {}

  /** The served series matching every filter, after bringing changed publishers up to date. */
  match(filters: SeriesFilters): Series[] {
    this.refresh()
    const found: Series[] = []
    if (filtersNoSeries(filters)) {
      for (const partition of this.#partitions.values())
        for (const series of partition.all) found.push(series)
      return found
    }
    const wanted = wantedOf(filters)
    for (const [slug, partition] of this.#partitions) {
      if (filters.publisher !== undefined && slug !== filters.publisher) continue
      for (const series of partition.candidates(wanted)) if (matches(series, wanted)) found.push(series)
    }
    return found
  }

  /** Slots of every status the served series of these publishers hold, as of the last refresh. */
  servedSlots(publishers: Iterable<string>): number {
    let slots = 0
    for (const slug of publishers) slots += this.#partitions.get(slug)?.slots ?? 0
    return slots
  }

  /** Slots of the status every served series holds (at any time), after bringing changed publishers up to date. */
  servedSlotsOf(status: number): number {
    this.refresh()
    let slots = 0
    for (const partition of this.#partitions.values()) slots += partition.statusSlots[status] as number
    return slots
  }

  /**
   * What a search from `moment` over every served series needs: how many slots of the status start at or
   * after it, and the first such start (null when none is left).
   */
  servedFrom(status: number, moment: number): { slots: number; next: number | null } {
    this.refresh()
    let slots = 0
    let next: number | null = null
    for (const partition of this.#partitions.values()) {
      const tally = partition.tally(this.db, status, moment)
      if (!tally) continue
      slots += (partition.statusSlots[status] as number) - tally.before
      if (tally.next !== null && (next === null || tally.next < next)) next = tally.next
    }
    return { slots, next }
  }

  /** The start hours of these served series' slots of the status (see startHours.ts), as of the last refresh. */
  hoursOf(series: Series[], status: number): Int32Array[] {
    const none = new Int32Array(0)
    let partition: Partition | undefined
    let publisher: string | undefined
    return series.map((entry) => {
      if (entry.publisher !== publisher) {
        publisher = entry.publisher
        partition = this.#partitions.get(publisher)
      }
      return partition?.hours(this.db, status).bySeries.get(entry.id) ?? none
    })
  }

  /** The start hours of every served series' slots of the status, summed per publisher, as of the last refresh. */
  servedHours(status: number): Histogram[] {
    return [...this.#partitions.values()].map((partition) => partition.hours(this.db, status).served)
  }

  /** Every served series as members of its part, as of the last refresh. */
  allMembers(): PartMembers[] {
    return [...this.#partitions.values()].flatMap((partition) => partition.members())
  }

  /** Brings changed publishers up to date (every search does, first; a few µs when nothing changed). */
  refresh() {
    const generation = this.db.changeGeneration()
    if (generation === this.#generation) return
    this.#generation = generation
    const publishers = this.db.statement('SELECT slug, enabled, slot_part AS part FROM publishers').all() as {
      slug: string
      enabled: number
      part: number | null
    }[]
    const served = new Set<string>()
    for (const { slug, enabled, part } of publishers) {
      if (enabled !== 1 || part === null) continue
      served.add(slug)
      if (this.#partitions.get(slug)?.part !== part) this.#load(slug, part)
    }
    for (const slug of this.#partitions.keys()) if (!served.has(slug)) this.#partitions.delete(slug)
  }

  #load(slug: string, part: number) {
    const partition = new Partition(part)
    const rows = this.db
      .statement(`SELECT * FROM sched_series r WHERE r.publisher = ? AND ${SERVED_SERIES}`)
      .all(slug) as SeriesRow[]
    for (const row of rows) partition.add(toSeries(row, part))
    this.#partitions.set(slug, partition)
  }
}
