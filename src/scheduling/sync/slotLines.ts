import { jsonLines } from '../../ingest/jsonLines.js'
import type { Lines } from '../../ingest/lines.js'
import { isJsonObject } from '../../jsonObject.js'
import { type AcceptingPatients, type Coding, SLOT_STATUSES } from '../model.js'
import { readSlot, type SlotRecord } from './feedResources.js'

/**
 * Slot lines read into slots, and the slots' form when they cross between threads (slotParser.ts): typed
 * arrays and one string, because a structured clone of an object per slot costs about what parsing the line
 * again does.
 */

/** The text members of a slot, in the order they are packed; an absent one has length -1. */
const TEXT_MEMBERS = 7

export interface SlotBatch {
  /** Lines that held a record (not blank), refused ones included. */
  records: number
  /** Per slot, its line. */
  lines: Int32Array
  /** Per slot: status index, start, end, capacity (NaN when none). */
  numbers: Float64Array
  /** Per slot, its TEXT_MEMBERS texts one after the other; `lengths` cuts them apart. */
  text: string
  lengths: Int32Array
  /** Refused lines, in line order. */
  problems: { line: number; message: string }[]
  /** The stream's last line, without a line break, did not parse: the file broke off. */
  brokenEnd: boolean
}

/** Reads every line of `lines` as a Slot; `oversized` is what a line past the record limit is refused with. */
export function readSlotLines(lines: Lines, oversized: string): SlotBatch {
  const count = lines.bounds.length / 2
  const slotLines = new Int32Array(count)
  const numbers = new Float64Array(count * 4)
  const lengths = new Int32Array(count * TEXT_MEMBERS)
  const texts: string[] = []
  const problems: SlotBatch['problems'] = []
  let records = 0
  let slots = 0
  let brokenEnd = false
  const text = (index: number, value: string | undefined) => {
    lengths[slots * TEXT_MEMBERS + index] = value === undefined ? -1 : value.length
    if (value !== undefined) texts.push(value)
  }
  for (const { line, record: parsed, unterminated } of jsonLines(lines, oversized)) {
    records++
    const record = 'value' in parsed ? parsed.value : undefined
    if (!isJsonObject(record)) {
      if (unterminated) brokenEnd = true
      else problems.push({ line, message: 'problem' in parsed ? parsed.problem : 'not a JSON object' })
      continue
    }
    const slot = readSlot(record)
    if (typeof slot === 'string') {
      problems.push({ line, message: slot })
      continue
    }
    slotLines[slots] = line
    numbers[slots * 4] = SLOT_STATUSES.indexOf(slot.status)
    numbers[slots * 4 + 1] = slot.startMs
    numbers[slots * 4 + 2] = slot.endMs
    numbers[slots * 4 + 3] = slot.capacity ?? Number.NaN
    text(0, slot.id)
    text(1, slot.scheduleId)
    text(2, slot.serviceTypes.length > 0 ? JSON.stringify(slot.serviceTypes) : undefined)
    text(3, slot.appointmentType)
    text(4, slot.accepting)
    text(5, slot.bookingLink)
    text(6, slot.bookingPhone)
    slots++
  }
  return {
    records,
    lines: slotLines.slice(0, slots),
    numbers: numbers.slice(0, slots * 4),
    text: texts.join(''),
    lengths: lengths.slice(0, slots * TEXT_MEMBERS),
    problems,
    brokenEnd,
  }
}

/**
 * The batch's slots and refused lines, in line order: `take` with each slot, `refuse` with each refused line.
 */
export function eachOfBatch(
  batch: SlotBatch,
  take: (slot: SlotRecord, line: number) => void,
  refuse: (line: number, message: string) => void,
): void {
  const { lines, numbers, text, lengths, problems } = batch
  let problem = 0
  const refuseBefore = (line: number) => {
    for (; problem < problems.length && (problems[problem]?.line as number) < line; problem++) {
      const { line: refused, message } = problems[problem] as { line: number; message: string }
      refuse(refused, message)
    }
  }
  let cut = 0
  const next = (index: number): string | undefined => {
    const length = lengths[index] as number
    if (length < 0) return undefined
    const value = text.slice(cut, cut + length)
    cut += length
    return value
  }
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as number
    refuseBefore(line)
    const base = index * TEXT_MEMBERS
    const slot: SlotRecord = {
      id: next(base) as string,
      scheduleId: next(base + 1) as string,
      status: SLOT_STATUSES[numbers[index * 4] as number] as SlotRecord['status'],
      startMs: numbers[index * 4 + 1] as number,
      endMs: numbers[index * 4 + 2] as number,
      serviceTypes: [],
    }
    const serviceTypes = next(base + 2)
    if (serviceTypes !== undefined) slot.serviceTypes = JSON.parse(serviceTypes) as Coding[]
    const appointmentType = next(base + 3)
    const accepting = next(base + 4)
    const bookingLink = next(base + 5)
    const bookingPhone = next(base + 6)
    const capacity = numbers[index * 4 + 3] as number
    if (appointmentType !== undefined) slot.appointmentType = appointmentType
    if (accepting !== undefined) slot.accepting = accepting as AcceptingPatients
    if (bookingLink !== undefined) slot.bookingLink = bookingLink
    if (bookingPhone !== undefined) slot.bookingPhone = bookingPhone
    if (!Number.isNaN(capacity)) slot.capacity = capacity
    take(slot, line)
  }
  refuseBefore(Number.POSITIVE_INFINITY)
}
