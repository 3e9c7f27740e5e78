import type { Db } from '../../db/open.js'
import type { Group, ScheduleModel } from './feedModel.js'
import type { AcceptingPatients, Coding } from '../model.js'
import { startsBlob } from '../search/startTimes.js'
import { SeriesTallies } from './seriesTallies.js'

export interface SlotRow {
  id: string
  status: number
  startMs: number
  endMs: number
  bookingLink: string | null
  bookingPhone: string | null
  capacity: number | null
}

export interface SeriesAttributes {
  serviceTypes: Coding[]
  appointmentType: string | null
  accepting: AcceptingPatients | null
}

/** Removes everything a publisher contributed to the read tables; the caller holds the transaction. */
export function deletePublisherSlots(db: Db, publisher: string): void {
  const groups = 'SELECT id FROM sched_groups WHERE publisher = ?'
  const series = 'SELECT id FROM sched_series WHERE publisher = ?'
  db.prepare(
    'DELETE FROM sched_slot_order WHERE part = (SELECT slot_part FROM publishers WHERE slug = ?)',
  ).run(publisher)
  db.prepare(`DELETE FROM sched_slots WHERE series_id IN (${series})`).run(publisher)
  db.prepare(`DELETE FROM sched_series_starts WHERE series_id IN (${series})`).run(publisher)
  db.prepare(`DELETE FROM sched_series WHERE group_id IN (${groups})`).run(publisher)
  db.prepare('DELETE FROM sched_groups WHERE publisher = ?').run(publisher)
}

/** Slots one statement inserts: a statement per slot cost about 1 µs a slot more (3.3 against 2.3). */
const SLOTS_PER_INSERT = 32
const SLOT_COLUMNS = 9
/** Bits of the filter of slots seen: 4 MiB, a few percent of false alarms at a million slots a publisher. */
const SEEN_BITS_LOG2 = 25

/**
 * A slot's bit in the filter of slots seen, from what identifies it but its id (hashing the id's text would
 * cost more than the rare false alarm it saves).
 */
function seenBit(series: number, status: number, startMs: number): number {
  let hash = Math.imul(series ^ (status << 28), 0x9e3779b1)
  hash = Math.imul(hash ^ (startMs >>> 0), 0x85ebca77)
  hash = Math.imul(hash ^ Math.floor(startMs / 0x1_0000_0000) ^ (hash >>> 15), 0xc2b2ae35)
  return (hash ^ (hash >>> 13)) >>> (32 - SEEN_BITS_LOG2)
}

/**
 * Writes one publisher's groups, series and slots into the read tables. It runs inside the sync's single
 * transaction, so readers see the old data until the whole feed is in.
 *
 * Slots go in by statements of SLOTS_PER_INSERT. A slot repeated in the feed must still be told at its own
 * line: every slot's (series, status, start) marks a bit, and a slot whose bit is already set, which may
 * repeat an earlier one, is looked for among those waiting and written alone, so that the table says
 * whether it repeats one written.
 */
export class SlotWriter {
  readonly #groupIds = new Map<string, number>()
  readonly #seriesIds = new Map<ScheduleModel, Map<string, number>>()
  readonly #tallies = new SeriesTallies()
  readonly #insertGroup
  readonly #insertSeries
  readonly #insertSlot
  readonly #insertSlots
  readonly #seen = new Uint32Array((1 << SEEN_BITS_LOG2) / 32)
  /**
   * The JSON of values many rows share (a location's summary, by each provider there; a list of codings, by
   * the feed model's one copy of it), made once.
   */
  readonly #sharedJson = new WeakMap<object, string>()
  /** Columns of the slots waiting for a full statement, one after the other. */
  readonly #waiting: unknown[] = []
  written = 0

  constructor(
    private readonly db: Db,
    private readonly publisher: string,
    /** The sync's own part of the slots (see migration 5): its keys sit together in the slot order. */
    private readonly part: number,
  ) {
    this.#insertGroup = db.prepare(
      `INSERT INTO sched_groups (publisher, key, location, provider, is_virtual) VALUES (?, ?, ?, ?, ?)`,
    )
    this.#insertSeries = db.prepare(
      `INSERT INTO sched_series (group_id, group_key, publisher, city, state, is_virtual, npis,
         schedule_id, service_types, specialties, appointment_type, accepting)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    // OR IGNORE also where no slot can repeat another: with ABORT, SQLite journals every page a statement of
    // several rows touches, to undo it whole (that made a sync 15 % slower).
    const insertSlots = (rows: number) =>
      db.prepare(
        `INSERT OR IGNORE INTO sched_slots
           (series_id, status, start_ms, id, end_ms, booking_link, booking_phone, capacity, part)
         VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      )
    this.#insertSlot = insertSlots(1)
    this.#insertSlots = insertSlots(SLOTS_PER_INSERT)
  }

  #groupId(group: Group): number {
    const known = this.#groupIds.get(group.key)
    if (known !== undefined) return known
    const id = Number(
      this.#insertGroup.run(
        this.publisher,
        group.key,
        this.#jsonOf(group.location),
        group.provider ? JSON.stringify(group.provider) : null,
        group.isVirtual ? 1 : 0,
      ).lastInsertRowid,
    )
    this.#groupIds.set(group.key, id)
    return id
  }

  /** The series of a schedule with a slot's own attributes; one row per distinct combination. */
  seriesId(schedule: ScheduleModel, attributes: SeriesAttributes): number {
    // Most slots inherit their schedule's service types: only a slot's own list needs serialising.
    const ownTypes =
      attributes.serviceTypes === schedule.serviceTypes ? '' : JSON.stringify(attributes.serviceTypes)
    const signature = `${ownTypes}\u0000${attributes.appointmentType ?? ''}\u0000${attributes.accepting ?? ''}`
    let ofSchedule = this.#seriesIds.get(schedule)
    if (!ofSchedule) {
      ofSchedule = new Map()
      this.#seriesIds.set(schedule, ofSchedule)
    }
    const known = ofSchedule.get(signature)
    if (known !== undefined) return known
    const { group } = schedule
    const id = Number(
      this.#insertSeries.run(
        this.#groupId(group),
        group.key,
        this.publisher,
        group.location.city ?? null,
        group.location.state ?? null,
        group.isVirtual ? 1 : 0,
        JSON.stringify(group.npis),
        schedule.id,
        this.#jsonOf(attributes.serviceTypes),
        this.#jsonOf(schedule.specialties),
        attributes.appointmentType,
        attributes.accepting,
      ).lastInsertRowid,
    )
    ofSchedule.set(signature, id)
    return id
  }

  /** False when the feed repeats a slot it already gave (same id, schedule, status and start). */
  insertSlot(seriesId: number, slot: SlotRow): boolean {
    const { status, startMs } = slot
    const waiting = this.#waiting
    waiting.push(
      seriesId,
      status,
      startMs,
      slot.id,
      slot.endMs,
      slot.bookingLink,
      slot.bookingPhone,
      slot.capacity,
      this.part,
    )
    if (this.#seenBefore(seriesId, status, startMs)) {
      // It may repeat a slot still waiting or one written: written alone, at once, unless it repeats the first.
      const row = waiting.splice(waiting.length - SLOT_COLUMNS)
      if (repeatsWaiting(waiting, row) || this.#insertSlot.run(row).changes === 0) return false
    } else if (waiting.length === SLOTS_PER_INSERT * SLOT_COLUMNS) {
      // No slot of a full statement can repeat another (its bit was clear): one missing would be a fault.
      if (this.#insertSlots.run(waiting).changes !== SLOTS_PER_INSERT)
        throw new Error('a slot whose bit was clear repeated another')
      waiting.length = 0
    }
    this.written++
    this.#tallies.add(seriesId, status, startMs, Boolean(slot.bookingLink), Boolean(slot.bookingPhone))
    return true
  }

  /**
   * Records each series' slot counts, first starts, slot starts and booking methods; call once all slots
   * are in.
   */
  finish(): void {
    this.#writeWaiting()
    if (this.#tallies.size === 0) return
    const update = this.db.prepare(
      `UPDATE sched_series SET free_count = ?, busy_count = ?, unavailable_count = ?, tentative_count = ?,
         free_first = ?, busy_first = ?, unavailable_first = ?, tentative_first = ?, online = ?, phone = ?
       WHERE id = ?`,
    )
    const insertStarts = this.db.prepare(
      'INSERT INTO sched_series_starts (series_id, free, busy, unavailable, tentative) VALUES (?, ?, ?, ?, ?)',
    )
    const { lowest, highest } = this.#tallies.range()
    for (const { id, counts, firsts, starts, online, phone } of this.#tallies.figures()) {
      update.run(...counts, ...firsts, online ? 1 : 0, phone ? 1 : 0, id)
      insertStarts.run(id, ...starts.map(startsBlob))
    }
    // The sync's series are the newest rows of sched_series, so their slots are one range of the primary key.
    this.db
      .prepare(
        `INSERT INTO sched_slot_order (part, status, start_ms, id, series_id)
         SELECT part, status, start_ms, id, series_id FROM sched_slots
         WHERE series_id BETWEEN ? AND ? AND part = ? ORDER BY 1, 2, 3, 4, 5`,
      )
      .run(lowest, highest, this.part)
  }

  #jsonOf(value: object): string {
    let json = this.#sharedJson.get(value)
    if (json === undefined) {
      json = JSON.stringify(value)
      this.#sharedJson.set(value, json)
    }
    return json
  }

  /** Whether a slot of this series, status and start may have been given before; marks it given. */
  #seenBefore(series: number, status: number, startMs: number): boolean {
    const bit = seenBit(series, status, startMs)
    const word = bit >>> 5
    const mask = 1 << (bit & 31)
    const seen = ((this.#seen[word] as number) & mask) !== 0
    this.#seen[word] = (this.#seen[word] as number) | mask
    return seen
  }

  /** Writes the slots left waiting for a full statement, one by one. */
  #writeWaiting(): void {
    for (let at = 0; at < this.#waiting.length; at += SLOT_COLUMNS)
      this.#insertSlot.run(this.#waiting.slice(at, at + SLOT_COLUMNS))
    this.#waiting.length = 0
  }
}

/** Whether `row` has the key (series, status, start, id) of one of the rows waiting, columns end to end. */
function repeatsWaiting(waiting: readonly unknown[], row: readonly unknown[]): boolean {
  for (let at = 0; at < waiting.length; at += SLOT_COLUMNS) {
    if (
      waiting[at] === row[0] &&
      waiting[at + 1] === row[1] &&
      waiting[at + 2] === row[2] &&
      waiting[at + 3] === row[3]
    )
      return true
  }
  return false
}
