/**
 * Reads the FHIR resources of a SMART Scheduling Links feed — the original 2021 form and the HL7 STU 1 form —
 * into the summaries the API serves. Pure functions: no I/O, no store.
 */

import {
  ACCEPTING_PATIENTS,
  type AcceptingPatients,
  type Coding,
  type Identifier,
  type LocationSummary,
  type ProviderSummary,
  SLOT_STATUSES,
  type SlotStatus,
} from '../model.js'
import { isJsonObject as isObject, type JsonObject } from '../../jsonObject.js'

/** The two extension namespaces in use: the original registry and the HL7 STU 1 guide. */
const EXTENSION_BASES = [
  'http://fhir-registry.smarthealthit.org/StructureDefinition/',
  'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/',
]

export const NPI_SYSTEMS = new Set([
  'http://hl7.org/fhir/sid/us-npi',
  'http://terminology.hl7.org/NamingSystem/npi',
  'urn:oid:2.16.840.1.113883.4.6',
])

const VIRTUAL_PHYSICAL_TYPE = 'vi'

// FHIR JSON is untyped input: these readers accept anything and keep only well-formed members.
type Json = JsonObject

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined

/** The extensions of a resource keyed by their short name (`booking-deep-link`), whichever namespace. */
export function extensionsByName(resource: Json): Map<string, Json[]> {
  const found = new Map<string, Json[]>()
  for (const extension of asArray(resource.extension)) {
    if (!isObject(extension)) continue
    const url = asString(extension.url)
    const base = url && EXTENSION_BASES.find((prefix) => url.startsWith(prefix))
    if (!url || !base) continue
    const name = url.slice(base.length)
    const list = found.get(name)
    if (list) list.push(extension)
    else found.set(name, [extension])
  }
  return found
}

export function readCoding(value: unknown): Coding | undefined {
  if (!isObject(value)) return undefined
  const code = asString(value.code)
  if (!code) return undefined
  const system = asString(value.system)
  const display = asString(value.display)
  // Members in the order the spec lists them: system, code, display.
  const coding: Coding = system ? { system, code } : { code }
  if (display) coding.display = display
  return coding
}

/** Every coding of a list of CodeableConcepts. */
export function conceptCodings(concepts: unknown): Coding[] {
  return asArray(concepts).flatMap((concept) =>
    isObject(concept)
      ? asArray(concept.coding)
          .map(readCoding)
          .filter((coding) => coding !== undefined)
      : [],
  )
}

function conceptText(concepts: unknown): string | undefined {
  for (const concept of asArray(concepts)) {
    if (!isObject(concept)) continue
    const text = asString(concept.text) ?? conceptCodings([concept])[0]?.display
    if (text) return text
  }
  return undefined
}

function readIdentifiers(value: unknown): Identifier[] {
  return asArray(value)
    .flatMap((entry) => {
      if (!isObject(entry)) return []
      const identifierValue = asString(entry.value)
      if (!identifierValue) return []
      const system = asString(entry.system)
      return [system ? { system, value: identifierValue } : { value: identifierValue }]
    })
    .slice() // flatMap leaves room for 17: a sync holds one list per provider and location
}

export function npiOf(identifiers: Identifier[]): string | undefined {
  return identifiers.find((identifier) => identifier.system && NPI_SYSTEMS.has(identifier.system))?.value
}

function telecoms(resource: Json, system: string): string[] {
  return asArray(resource.telecom).flatMap((entry) =>
    isObject(entry) && entry.system === system && asString(entry.value) ? [entry.value as string] : [],
  )
}

function humanName(value: unknown): string | undefined {
  const name = asArray(value).find(isObject)
  if (!name) return undefined
  const text = asString(name.text)
  if (text) return text
  const parts = [
    ...asArray(name.prefix),
    ...asArray(name.given),
    name.family,
    ...asArray(name.suffix),
  ].filter((part): part is string => typeof part === 'string' && part.length > 0)
  return parts.length > 0 ? parts.join(' ') : undefined
}

export function readLocation(resource: Json, id: string): LocationSummary {
  const address = isObject(resource.address) ? resource.address : {}
  const summary: LocationSummary = {
    id,
    identifier: readIdentifiers(resource.identifier),
    phone: telecoms(resource, 'phone'),
    website: telecoms(resource, 'url'),
    addressLine: asArray(address.line).filter((line): line is string => typeof line === 'string'),
  }
  const name = asString(resource.name)
  const city = asString(address.city)
  const state = asString(address.state)
  const postalCode = asString(address.postalCode)
  if (name) summary.name = name
  if (city) summary.city = city
  if (state) summary.state = state
  if (postalCode) summary.postalCode = postalCode
  const physical = conceptCodings([resource.physicalType])[0]
  if (physical) {
    summary.physicalType = physical.system
      ? { system: physical.system, code: physical.code }
      : { code: physical.code }
  }
  return summary
}

export const isVirtualLocation = (location: LocationSummary) =>
  location.physicalType?.code === VIRTUAL_PHYSICAL_TYPE

/** A provider read from a PractitionerRole, resolving its Practitioner when the feed carries it. */
export function readPractitionerRole(
  resource: Json,
  id: string,
  practitioner: ProviderSummary | undefined,
): ProviderSummary {
  const identifier = readIdentifiers(resource.identifier)
  const specialties = conceptCodings(resource.specialty)
  const reference = isObject(resource.practitioner) ? resource.practitioner : {}
  const summary: ProviderSummary = { id, identifier, type: 'practitioner-role', specialties }
  const name = practitioner?.name ?? asString(reference.display)
  const specialty = conceptText(resource.specialty)
  const npi = npiOf(identifier) ?? practitioner?.npi
  if (name) summary.name = name
  if (specialty) summary.specialty = specialty
  if (npi) summary.npi = npi
  return summary
}

export function readPractitioner(resource: Json, id: string): ProviderSummary {
  const identifier = readIdentifiers(resource.identifier)
  const summary: ProviderSummary = { id, identifier, type: 'practitioner', specialties: [] }
  const name = humanName(resource.name)
  const npi = npiOf(identifier)
  if (name) summary.name = name
  if (npi) summary.npi = npi
  return summary
}

/** A healthcare service as provider: its NPI is the providing organization's, when the service carries it. */
export function readHealthcareService(resource: Json, id: string): ProviderSummary {
  const identifier = readIdentifiers(resource.identifier)
  const specialties = conceptCodings(resource.specialty)
  const summary: ProviderSummary = { id, identifier, type: 'healthcare-service', specialties }
  const name = asString(resource.name)
  const specialty = conceptText(resource.specialty)
  const npi = npiOf(identifier)
  if (name) summary.name = name
  if (specialty) summary.specialty = specialty
  if (npi) summary.npi = npi
  return summary
}

/** `Location/12` → `['Location', '12']`; absolute and relative references alike. */
export function parseReference(value: unknown): [type: string, id: string] | undefined {
  const reference = isObject(value) ? asString(value.reference) : undefined
  const match = reference?.match(/(?:^|\/)([A-Z][A-Za-z]+)\/([^/]+?)(?:\/_history\/[^/]+)?$/)
  return match ? [match[1] as string, match[2] as string] : undefined
}

export function readAcceptingPatients(extensions: Map<string, Json[]>): AcceptingPatients | undefined {
  const code = readCoding(extensions.get('patient-type')?.[0]?.valueCoding)?.code
  return ACCEPTING_PATIENTS.find((known) => known === code)
}

export function readBookingPhone(extensions: Map<string, Json[]>): string | undefined {
  const extension = extensions.get('booking-phone')?.[0]
  if (!extension) return undefined
  if (isObject(extension.valueContactPoint)) return asString(extension.valueContactPoint.value)
  return asString(extension.valueString)
}

const LENIENT_TIMESTAMP =
  /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/

/**
 * Real feeds send `2021-03-01T14:00-05` or no seconds; read them as their writers meant, to epoch ms.
 * A timestamp without any offset is taken as UTC.
 */
export function parseLenientTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const instant = utcInstant(value)
  if (instant !== undefined) return instant
  const match = value.trim().match(LENIENT_TIMESTAMP)
  if (!match) return undefined
  const [, date, hour, minute, second = '00', fraction = '', zone = 'Z'] = match
  let offset = zone
  if (zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '')
    offset = `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`
  }
  const parsed = Date.parse(`${date}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`)
  return Number.isNaN(parsed) ? undefined : parsed
}

const code = (char: string) => char.charCodeAt(0)
/** Where a full instant has its separators (`YYYY-MM-DDThh:mm:ss`), and which. */
const INSTANT_MARKS = [
  [4, code('-')],
  [7, code('-')],
  [10, code('T')],
  [13, code(':')],
  [16, code(':')],
] as const
const DOT = code('.')
const Z = code('Z')
const ZERO = code('0')

/**
 * A full UTC instant as most feeds write it, `YYYY-MM-DDThh:mm:ss[.f[f[f]]]Z`, each field in its calendar's
 * range, read digit by digit (a sync reads two a slot: Date.parse took a tenth of the parser's thread);
 * undefined for any other text, which the lenient reading then takes as before.
 */
function utcInstant(text: string): number | undefined {
  const { length } = text
  if (length !== 20 && (length < 22 || length > 24)) return undefined
  if (text.charCodeAt(length - 1) !== Z || (length > 20 && text.charCodeAt(19) !== DOT)) return undefined
  for (const [at, mark] of INSTANT_MARKS) if (text.charCodeAt(at) !== mark) return undefined
  const year = digitsAt(text, 0, 4)
  const month = digitsAt(text, 5, 7)
  const day = digitsAt(text, 8, 10)
  const hour = digitsAt(text, 11, 13)
  const minute = digitsAt(text, 14, 16)
  const second = digitsAt(text, 17, 19)
  // A fraction of one or two digits is tenths or hundredths.
  const ms = length > 20 ? digitsAt(text, 20, length - 1) * 10 ** (24 - length) : 0
  // Years below 100 are left to Date.parse: Date.UTC reads them as 1900 + year. A NaN fails every test.
  if (!(year >= 100 && month >= 1 && month <= 12 && hour <= 23 && minute <= 59 && second <= 59 && ms >= 0))
    return undefined
  // Past the 28th, the month's last day (day 0 of the next month) bounds it.
  if (!(day >= 1 && (day <= 28 || day <= new Date(Date.UTC(year, month, 0)).getUTCDate()))) return undefined
  return Date.UTC(year, month - 1, day, hour, minute, second, ms)
}

/** The decimal number written in `text` from `from` to `to`; NaN when any of it is not a digit. */
function digitsAt(text: string, from: number, to: number): number {
  let number = 0
  for (let at = from; at < to; at++) {
    const digit = text.charCodeAt(at) - ZERO
    if (!(digit >= 0 && digit <= 9)) return Number.NaN
    number = number * 10 + digit
  }
  return number
}

export interface SlotRecord {
  id: string
  scheduleId: string
  status: SlotStatus
  startMs: number
  endMs: number
  /** The slot's own service types; empty when it inherits its schedule's. */
  serviceTypes: Coding[]
  appointmentType?: string
  accepting?: AcceptingPatients
  bookingLink?: string
  bookingPhone?: string
  capacity?: number
}

/** One Slot line, or the reason it cannot be used. */
export function readSlot(resource: Json): SlotRecord | string {
  if (resource.resourceType !== 'Slot') {
    return `expected a Slot, found ${String(resource.resourceType ?? 'no resourceType')}`
  }
  const id = asString(resource.id)
  if (!id) return 'Slot has no id'
  const schedule = parseReference(resource.schedule)
  if (!schedule || schedule[0] !== 'Schedule') return `Slot ${id} has no Schedule reference`
  const status = SLOT_STATUSES.find((known) => known === resource.status)
  if (!status) return `Slot ${id} has an unknown status "${String(resource.status)}"`
  const startMs = parseLenientTimestamp(resource.start)
  const endMs = parseLenientTimestamp(resource.end)
  if (startMs === undefined) return `Slot ${id} has an unreadable start "${String(resource.start)}"`
  if (endMs === undefined) return `Slot ${id} has an unreadable end "${String(resource.end)}"`
  const extensions = extensionsByName(resource)
  const slot: SlotRecord = {
    id,
    scheduleId: schedule[1],
    status,
    startMs,
    endMs,
    serviceTypes: conceptCodings(resource.serviceType),
  }
  const appointmentType = isObject(resource.appointmentType)
    ? (conceptCodings([resource.appointmentType])[0]?.code ?? asString(resource.appointmentType.text))
    : undefined
  const accepting = readAcceptingPatients(extensions)
  const bookingLink = asString(extensions.get('booking-deep-link')?.[0]?.valueUrl)
  const bookingPhone = readBookingPhone(extensions)
  const capacity = extensions.get('slot-capacity')?.[0]?.valueInteger
  if (appointmentType) slot.appointmentType = appointmentType
  if (accepting) slot.accepting = accepting
  if (bookingLink) slot.bookingLink = bookingLink
  if (bookingPhone) slot.bookingPhone = bookingPhone
  if (typeof capacity === 'number' && Number.isInteger(capacity)) slot.capacity = capacity
  return slot
}
