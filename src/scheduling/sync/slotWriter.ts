import type { Db } from '../../db/open.js'
import type { Group, ScheduleModel } from './feedModel.js'
import type { AcceptingPatients, Coding } from '../model.js'
import { startsBlob } from '../search/startTimes.js'

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
  db.prepare(`DELETE FROM sched_slots WHERE series_id IN (${series})`).run(publisher)
  db.prepare(`DELETE FROM sched_series_starts WHERE series_id IN (${series})`).run(publisher)
  db.prepare(`DELETE FROM sched_series WHERE group_id IN (${groups})`).run(publisher)
  db.prepare('DELETE FROM sched_groups WHERE publisher = ?').run(publisher)
}

/**
 * Writes one publisher's groups, series and slots into the read tables. It runs inside the sync's single
 * transaction, so readers see the old data until the whole feed is in.
 */
export class SlotWriter {
  readonly #groupIds = new Map<string, number>()
  readonly #seriesIds = new Map<ScheduleModel, Map<string, number>>()
  /** Per series: slots and first start per status, and whether any carries a booking link or phone. */
  readonly #seriesTallies = new Map<number, SeriesTally>()
  readonly #insertGroup
  readonly #insertSeries
  readonly #insertSlot
  written = 0

  constructor(
    private readonly db: Db,
    private readonly publisher: string,
    /** The sync's own part of the slots (see migration 5): its rows sit together in the by-start index. */
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
    this.#insertSlot = db.prepare(
      `INSERT OR IGNORE INTO sched_slots
         (series_id, status, start_ms, id, end_ms, booking_link, booking_phone, capacity, part)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
  }

  #groupId(group: Group): number {
    const known = this.#groupIds.get(group.key)
    if (known !== undefined) return known
    const id = Number(
      this.#insertGroup.run(
        this.publisher,
        group.key,
        JSON.stringify(group.location),
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
        JSON.stringify(attributes.serviceTypes),
        JSON.stringify(schedule.specialties),
        attributes.appointmentType,
        attributes.accepting,
      ).lastInsertRowid,
    )
    ofSchedule.set(signature, id)
    return id
  }

  /** False when the feed repeats a slot it already gave (same id, schedule, status and start). */
  insertSlot(seriesId: number, slot: SlotRow): boolean {
    const { changes } = this.#insertSlot.run(
      seriesId,
      slot.status,
      slot.startMs,
      slot.id,
      slot.endMs,
      slot.bookingLink,
      slot.bookingPhone,
      slot.capacity,
      this.part,
    )
    if (changes === 0) return false
    this.written++
    let tally = this.#seriesTallies.get(seriesId)
    if (!tally) {
      tally = {
        counts: [0, 0, 0, 0],
        firsts: [null, null, null, null],
        starts: [[], [], [], []],
        online: false,
        phone: false,
      }
      this.#seriesTallies.set(seriesId, tally)
    }
    const status = slot.status as 0 | 1 | 2 | 3
    tally.counts[status]++
    tally.starts[status].push(slot.startMs)
    const first = tally.firsts[status]
    if (first === null || slot.startMs < first) tally.firsts[status] = slot.startMs
    if (slot.bookingLink) tally.online = true
    if (slot.bookingPhone) tally.phone = true
    return true
  }

  /**
   * Records each series' slot counts, first starts, slot starts and booking methods; call once all slots
   * are in.
   */
  finish(): void {
    const update = this.db.prepare(
      `UPDATE sched_series SET free_count = ?, busy_count = ?, unavailable_count = ?, tentative_count = ?,
         free_first = ?, busy_first = ?, unavailable_first = ?, tentative_first = ?, online = ?, phone = ?
       WHERE id = ?`,
    )
    const insertStarts = this.db.prepare(
      'INSERT INTO sched_series_starts (series_id, free, busy, unavailable, tentative) VALUES (?, ?, ?, ?, ?)',
    )
    for (const [id, { counts, firsts, starts, online, phone }] of this.#seriesTallies) {
      update.run(...counts, ...firsts, online ? 1 : 0, phone ? 1 : 0, id)
      insertStarts.run(id, ...starts.map(startsBlob))
    }
  }
}

interface SeriesTally {
  counts: [number, number, number, number]
  firsts: [number | null, number | null, number | null, number | null]
  /** Per status, each slot's start. */
  starts: [number[], number[], number[], number[]]
  online: boolean
  phone: boolean
}
