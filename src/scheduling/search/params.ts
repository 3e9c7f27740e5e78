import { param, type ParamValues, withDefault } from '../../api/params.js'
import type { SlotFilters } from './matches.js'
import { SLOT_STATUSES, type SlotStatus } from '../model.js'

/** The spec's parameter table for slot listings, declared once for the three endpoints that share it. */
export const SLOT_FILTER_PARAMS = {
  status: withDefault(param.enumeration(SLOT_STATUSES, 'Slot status to list.'), 'free'),
  publisher: param.string('A publisher slug from /v1/scheduling/publishers.'),
  serviceTypeCode: param.list(
    100,
    'Comma-separated service type codes (up to 100); a slot matches when any of its serviceTypes carries one.',
  ),
  npi: param.list(100, 'Comma-separated ten-digit NPIs (up to 100), of a clinician or an organization.', {
    pattern: /^\d{10}$/,
    message: 'must list ten-digit NPIs',
  }),
  specialty: param.list(
    100,
    'Comma-separated specialties (up to 100): `code` in any system, or `system|code` in that system only.',
    { pattern: /^(?:[^|]+|[^|]+\|[^|]+)$/, message: 'must list `code` or `system|code` values' },
  ),
  appointmentType: param.string('Appointment type code.'),
  acceptingPatients: param.enumeration(
    ['newpt', 'existptonly', 'existptfam'] as const,
    'Patients accepted; a slot that declares no code matches any value.',
  ),
  isVirtual: param.boolean('true for virtual visits, false for in-person ones.'),
  city: param.string("The location's city."),
  state: param.string("The location's state."),
  startAfter: param.dateTime(
    'Slots starting at or after this time; default now unless includePast=true. Seconds and offset required.',
  ),
  startBefore: param.dateTime('Slots starting at or before this time. Seconds and offset required.'),
  includePast: withDefault(param.boolean('Include slots that started before now.'), 'false'),
  limit: withDefault(param.integer(1, 100, 'Page size: slots, groups or cards by endpoint.'), '25'),
  offset: withDefault(param.integer(0, Number.MAX_SAFE_INTEGER, 'Items to skip.'), '0'),
}

/** `/slots` alone takes the drill-down keys of the two grouped listings. */
export const SLOT_SEARCH_PARAMS = {
  ...SLOT_FILTER_PARAMS,
  providerLocationKey: param.string("A provider location's key: exactly that group's slots."),
  actorKey: param.string("An actor card's key (older form): exactly that card's slots."),
}

export type FilterValues = ParamValues<typeof SLOT_FILTER_PARAMS> &
  Partial<Pick<ParamValues<typeof SLOT_SEARCH_PARAMS>, 'providerLocationKey' | 'actorKey'>>

/** Parameter values to store filters: `startAfter` falls back to now unless past slots are asked for. */
export function toFilters(values: FilterValues, now: number): SlotFilters {
  const time = (value: string | undefined) => (value === undefined ? undefined : Date.parse(value))
  const filters: SlotFilters = {
    status: values.status,
    publisher: values.publisher,
    serviceTypeCode: values.serviceTypeCode,
    npi: values.npi,
    specialty: values.specialty,
    appointmentType: values.appointmentType,
    acceptingPatients: values.acceptingPatients,
    isVirtual: values.isVirtual,
    city: values.city,
    state: values.state,
    startAfter: time(values.startAfter) ?? (values.includePast ? undefined : now),
    startsNow: values.startAfter === undefined && !values.includePast,
    startBefore: time(values.startBefore),
    groupKeys: [values.providerLocationKey, values.actorKey].filter((key) => key !== undefined),
  }
  return filters
}

/**
 * The status a search's query asks for, as its place in SLOT_STATUSES, read before the parameters are
 * checked (what the index makes ready depends on it); undefined when unsaid or not a status, which the check
 * then answers.
 */
export function statusAsked(query: URLSearchParams): number | undefined {
  const asked = SLOT_STATUSES.indexOf(query.get('status') as SlotStatus)
  return asked < 0 ? undefined : asked
}
