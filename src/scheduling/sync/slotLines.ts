import { jsonLines } from '../../ingest/jsonLines.js'
import type { Lines } from '../../ingest/lines.js'
import { isJsonObject } from '../../jsonObject.js'
import { type AcceptingPatients, type Coding, SLOT_STATUSES } from '../model.js'
import { readSlot } from './feedResources.js'
import type { SlotRow } from './slotWriter.js'

/**
 * Slot lines read into slots, and the slots' form when they cross between threads (slotParser.ts): typed
 * arrays and one string, because a structured clone of an object per slot costs about what parsing the line
 * again does. What decides a slot's series (its schedule and own attributes) is given once per batch for all
 * the slots that share it (`kinds`), so that the writing thread looks a series up per kind, not per slot.
 */

/** The text members of a slot, in the order they are packed; an absent one has length -1. */
const TEXT_MEMBERS = 3

/** A slot's schedule and the attributes of its own that put it in a series of that schedule. */
export interface SlotKind {
  scheduleId: string
  /** The slot's own service types; empty when it inherits its schedule's. */
  serviceTypes: Coding[]
  appointmentType?: string
  accepting?: AcceptingPatients
}

export interface SlotBatch {
  /** Lines that held a record (not blank), refused ones included. */
  records: number
  /** Per slot, its line. */
  lines: Int32Array
  /** Per slot, its kind's place in `kinds`. */
  kindOf: Int32Array
  /** The batch's distinct kinds, in the order first met. */
  kinds: SlotKind[]
  /** Per slot: status index, start, end, capacity (NaN when none). */
  numbers: Float64Array
  /** Per slot, its TEXT_MEMBERS texts (id, booking link, booking phone) one after the other; `lengths` cuts them apart. */
  text: string
  lengths: Int32Array
  /** Refused lines, in line order. */
  problems: { line: number; message: string }[]
  /** The stream's last line, without a line break, did not parse: the file broke off. */
  brokenEnd: boolean
}

/** A slot of a batch as it is written: its id already behind the publisher's prefix. */
export interface BatchSlot extends SlotRow {
  /** Its kind's place in the batch's `kinds`. */
  kind: number
}

/** Reads every line of `lines` as a Slot; `oversized` is what a line past the record limit is refused with. */
export function readSlotLines(lines: Lines, oversized: string): SlotBatch {
  const count = lines.bounds.length / 2
  const slotLines = new Int32Array(count)
  const kindOf = new Int32Array(count)
  const kinds: SlotKind[] = []
  const kindPlaces = new Map<string, number>()
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
    const { scheduleId, serviceTypes, appointmentType, accepting } = slot
    const ownTypes = serviceTypes.length > 0 ? JSON.stringify(serviceTypes) : ''
    // Read back unambiguously whatever the texts hold: the id by its length, the service types' JSON and
    // the accepting code never hold a NUL, the appointment type is the rest.
    const kindKey = `${scheduleId.length}:${scheduleId}${ownTypes}\u0000${accepting ?? ''}\u0000${appointmentType ?? ''}`
    let kind = kindPlaces.get(kindKey)
    if (kind === undefined) {
      kind = kinds.length
      kindPlaces.set(kindKey, kind)
      kinds.push({
        scheduleId,
        serviceTypes,
        ...(appointmentType === undefined ? {} : { appointmentType }),
        ...(accepting === undefined ? {} : { accepting }),
      })
    }
    slotLines[slots] = line
    kindOf[slots] = kind
    numbers[slots * 4] = SLOT_STATUSES.indexOf(slot.status)
    numbers[slots * 4 + 1] = slot.startMs
    numbers[slots * 4 + 2] = slot.endMs
    numbers[slots * 4 + 3] = slot.capacity ?? Number.NaN
    text(0, slot.id)
    text(1, slot.bookingLink)
    text(2, slot.bookingPhone)
    slots++
  }
  return {
    records,
    lines: slotLines.slice(0, slots),
    kindOf: kindOf.slice(0, slots),
    kinds,
    numbers: numbers.slice(0, slots * 4),
    text: texts.join(''),
    lengths: lengths.slice(0, slots * TEXT_MEMBERS),
    problems,
    brokenEnd,
  }
}

/**
 * The batch's slots and refused lines, in line order: `take` with each slot (its id behind `idPrefix`; one
 * object for all, so `take` keeps none of it), `refuse` with each refused line.
 */
export function eachOfBatch(
  batch: SlotBatch,
  idPrefix: string,
  take: (slot: BatchSlot, line: number) => void,
  refuse: (line: number, message: string) => void,
): void {
  const { lines, kindOf, numbers, text, lengths, problems } = batch
  let problem = 0
  const refuseBefore = (line: number) => {
    for (; problem < problems.length && (problems[problem]?.line as number) < line; problem++) {
      const { line: refused, message } = problems[problem] as { line: number; message: string }
      refuse(refused, message)
    }
  }
  let cut = 0
  const next = (index: number): string | null => {
    const length = lengths[index] as number
    if (length < 0) return null
    const value = text.slice(cut, cut + length)
    cut += length
    return value
  }
  // One object a slot made two million objects of garbage in a national sync.
  const slot: BatchSlot = {
    kind: 0,
    id: '',
    status: 0,
    startMs: 0,
    endMs: 0,
    bookingLink: null,
    bookingPhone: null,
    capacity: null,
  }
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as number
    refuseBefore(line)
    const base = index * TEXT_MEMBERS
    const capacity = numbers[index * 4 + 3] as number
    slot.kind = kindOf[index] as number
    slot.id = idPrefix + (next(base) as string)
    slot.status = numbers[index * 4] as number
    slot.startMs = numbers[index * 4 + 1] as number
    slot.endMs = numbers[index * 4 + 2] as number
    slot.bookingLink = next(base + 1)
    slot.bookingPhone = next(base + 2)
    slot.capacity = Number.isNaN(capacity) ? null : capacity
    take(slot, line)
  }
  refuseBefore(Number.POSITIVE_INFINITY)
}
