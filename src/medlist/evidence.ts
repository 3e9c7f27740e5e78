import { type CodeKeys, type Coding, codeKeys, normalizeText } from './codes.js'
import { isJsonObject as isObject } from '../jsonObject.js'
import { type InputIndex, type InputRecord, type Resource, referenceOf } from './input.js'

export const MEDICATION_TYPES = [
  'MedicationRequest',
  'MedicationStatement',
  'MedicationDispense',
  'MedicationAdministration',
] as const
export type MedicationType = (typeof MEDICATION_TYPES)[number]

/**
 * What one record says about the medication's status: a status it sets (a current one, `active`, or a
 * stop), `neutral` (evidence of past use that sets nothing: an order run out, an old dispense), or
 * `unknown` (a draft, a dispense being prepared).
 */
export type Says = 'active' | 'stopped' | 'cancelled' | 'on-hold' | 'completed' | 'neutral' | 'unknown'

export interface Concept {
  codings: Coding[]
  text?: string
}

export interface Evidence {
  record: InputRecord
  type: MedicationType
  /** Epoch ms of the date the record speaks for; undefined when it has none (oldest). */
  time?: number
  says: Says
  /** The record says the drug was not taken (or is an error): kept as evidence, never makes it active. */
  negative: boolean
  /** An order, a dispense or an administration backs it. */
  backsOrder: boolean
  concept: Concept
  /** Its medication is a reference the input does not resolve. */
  unresolved?: string
  /** Dosage as a MedicationRequest writes it, when the record has one of that shape. */
  dosage?: unknown[]
  /** The concept's codes as reconciliation compares them, and its text normalised: worked out once. */
  keys: CodeKeys
  textKey?: string
}

const DAY_MS = 86_400_000
const ORDER_INTENTS = new Set(['order', 'original-order', 'reflex-order', 'filler-order', 'instance-order'])

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)
const array = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

function timeOf(value: unknown): number | undefined {
  const date = text(value)
  if (!date) return undefined
  const time = Date.parse(date)
  return Number.isNaN(time) ? undefined : time
}

const period = (value: unknown) => (isObject(value) ? value : {})

function conceptOf(value: unknown): Concept {
  if (!isObject(value)) return { codings: [] }
  const codings = array(value.coding).filter(isObject) as Coding[]
  const named = text(value.text) ?? codings.map((coding) => text(coding.display)).find(Boolean)
  return { codings, ...(named ? { text: named } : {}) }
}

/** The medication of a record: its CodeableConcept, or the code of the Medication it references. */
function medicationOf(record: InputRecord, index: InputIndex): { concept: Concept; unresolved?: string } {
  const { resource } = record
  if (resource.medicationCodeableConcept !== undefined)
    return { concept: conceptOf(resource.medicationCodeableConcept) }
  const reference = referenceOf(resource.medicationReference)
  if (reference === undefined) return { concept: { codings: [] } }
  const medication = index.resolve(reference, resource)
  const display = isObject(resource.medicationReference)
    ? text(resource.medicationReference.display)
    : undefined
  if (!medication || medication.resourceType !== 'Medication')
    return {
      concept: { codings: [], ...(display ? { text: display } : {}) },
      unresolved: `${record.path}.medicationReference`,
    }
  const concept = conceptOf(medication.code)
  return { concept: concept.text || !display ? concept : { ...concept, text: display } }
}

/** The latest end an order gives itself: its validity period, or its dosages' bounds. */
function orderEnd(resource: Resource): number | undefined {
  const ends = [
    timeOf(period(period(resource.dispenseRequest).validityPeriod).end),
    ...array(resource.dosageInstruction).map((dosage) =>
      timeOf(period(period(period(isObject(dosage) ? dosage.timing : undefined).repeat).boundsPeriod).end),
    ),
  ].filter((end): end is number => end !== undefined)
  return ends.length === 0 ? undefined : Math.max(...ends)
}

const STOPS = new Set(['stopped', 'cancelled', 'on-hold', 'completed'])

/** What a record's status says, by its type: the part of its evidence that differs between types. */
type Reading = Pick<Evidence, 'time' | 'says' | 'negative' | 'backsOrder' | 'dosage'>

function readingOf(record: InputRecord & { type: MedicationType }, status: string, now: number): Reading {
  const { resource } = record
  switch (record.type) {
    case 'MedicationRequest': {
      const ended = orderEnd(resource)
      return {
        time: timeOf(resource.authoredOn),
        negative: resource.doNotPerform === true || status === 'entered-in-error',
        backsOrder: ORDER_INTENTS.has(text(resource.intent) ?? ''),
        says:
          status === 'active'
            ? ended !== undefined && ended < now
              ? 'neutral'
              : 'active'
            : STOPS.has(status)
              ? (status as Says)
              : 'unknown',
        dosage: array(resource.dosageInstruction),
      }
    }
    case 'MedicationStatement': {
      const effective = period(resource.effectivePeriod)
      return {
        time:
          timeOf(resource.effectiveDateTime) ??
          timeOf(effective.end) ??
          timeOf(effective.start) ??
          timeOf(resource.dateAsserted),
        negative: status === 'not-taken' || status === 'entered-in-error',
        backsOrder: false,
        says: status === 'active' ? 'active' : STOPS.has(status) ? (status as Says) : 'unknown',
        dosage: array(resource.dosage),
      }
    }
    case 'MedicationDispense': {
      const handed = timeOf(resource.whenHandedOver)
      const days = isObject(resource.daysSupply) ? resource.daysSupply.value : undefined
      const lasts = handed !== undefined && typeof days === 'number' ? handed + days * DAY_MS : undefined
      return {
        time: handed ?? timeOf(resource.whenPrepared),
        negative: ['declined', 'stopped', 'cancelled', 'entered-in-error'].includes(status),
        backsOrder: true,
        says:
          status === 'completed' ? (lasts !== undefined && lasts > now ? 'active' : 'neutral') : 'unknown',
        dosage: array(resource.dosageInstruction),
      }
    }
    case 'MedicationAdministration': {
      const effective = period(resource.effectivePeriod)
      const time = timeOf(resource.effectiveDateTime) ?? timeOf(effective.end) ?? timeOf(effective.start)
      return {
        time,
        negative: status === 'not-done' || status === 'entered-in-error',
        backsOrder: true,
        says:
          status === 'in-progress'
            ? 'active'
            : status === 'completed'
              ? time !== undefined && time >= now - 7 * DAY_MS
                ? 'active'
                : 'neutral'
              : status === 'stopped'
                ? 'stopped'
                : 'unknown',
        dosage: undefined,
      }
    }
  }
}

/**
 * What one medication record says, as of `now`. Every Evidence has the same members in the same order (absent
 * ones undefined): a 50,000-record input sorts and groups them many times, and one shape keeps that fast.
 */
export function evidenceOf(
  record: InputRecord & { type: MedicationType },
  index: InputIndex,
  now: number,
): Evidence {
  const status = text(record.resource.status) ?? 'unknown'
  const { concept, unresolved } = medicationOf(record, index)
  const normalized = concept.text === undefined ? '' : normalizeText(concept.text)
  const reading = readingOf(record, status, now)
  return {
    record,
    type: record.type,
    time: reading.time,
    says: reading.says,
    negative: reading.negative,
    backsOrder: reading.backsOrder,
    concept,
    unresolved,
    dosage: reading.dosage,
    keys: codeKeys(concept.codings),
    textKey: normalized || undefined,
  }
}

/** The latest first; undated last; ties in input order. */
export const latestFirst = (a: Evidence, b: Evidence) =>
  (b.time ?? Number.NEGATIVE_INFINITY) - (a.time ?? Number.NEGATIVE_INFINITY)
