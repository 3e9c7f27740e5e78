import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { publishersShown } from './publishers.js'
import { ACCEPTING_PATIENTS, SLOT_STATUSES } from './model.js'
import { type GroupMatch, listCodings, searchGroups } from './search/groups.js'
import { answerHoldsThrough, type SlotFilters } from './search/matches.js'
import { searchSlots } from './search/slots.js'
import type { SlotIndex } from './search/slotIndex.js'
import {
  type FilterValues,
  SLOT_FILTER_PARAMS,
  SLOT_SEARCH_PARAMS,
  statusAsked,
  toFilters,
} from './search/params.js'

const string = { type: 'string' }
const CODING = {
  type: 'object',
  required: ['code'],
  properties: { system: string, code: string, display: string },
}
const IDENTIFIER = { type: 'object', required: ['value'], properties: { system: string, value: string } }
const strings = { type: 'array', items: string }
const LOCATION = {
  type: 'object',
  required: ['id'],
  properties: {
    id: string,
    identifier: { type: 'array', items: IDENTIFIER },
    name: string,
    phone: strings,
    website: strings,
    addressLine: strings,
    city: string,
    state: string,
    postalCode: string,
    physicalType: { type: 'object', properties: { system: string, code: string } },
  },
}
const PROVIDER = {
  type: 'object',
  required: ['id', 'type'],
  properties: {
    id: string,
    identifier: { type: 'array', items: IDENTIFIER },
    type: { type: 'string', enum: ['practitioner', 'practitioner-role', 'healthcare-service'] },
    name: string,
    specialty: string,
    specialties: { type: 'array', items: CODING },
    npi: { type: 'string', pattern: '^\\d{10}$' },
  },
}
const dateTime = { type: 'string', format: 'date-time' }
const accepting = { type: 'string', enum: [...ACCEPTING_PATIENTS] }
const SLOT = {
  type: 'object',
  required: ['id', 'publisher', 'scheduleId', 'status', 'start', 'end', 'isVirtual', 'location', 'source'],
  properties: {
    id: string,
    publisher: string,
    scheduleId: string,
    status: { type: 'string', enum: [...SLOT_STATUSES] },
    start: dateTime,
    end: dateTime,
    serviceTypeCode: string,
    serviceTypeText: string,
    serviceTypes: { type: 'array', items: CODING },
    appointmentType: string,
    acceptingPatients: accepting,
    isVirtual: { type: 'boolean' },
    bookingDeepLink: string,
    bookingPhone: string,
    capacity: { type: 'integer', minimum: 0 },
    location: LOCATION,
    provider: PROVIDER,
    source: {
      type: 'object',
      required: ['publisher', 'resourceId', 'transactionTime', 'syncedAt'],
      properties: { publisher: string, resourceId: string, transactionTime: dateTime, syncedAt: dateTime },
    },
  },
}
const total = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
const GROUP_PROPERTIES = {
  key: { type: 'string', description: 'Opaque; pass back as providerLocationKey or actorKey on /slots' },
  publisher: string,
  provider: PROVIDER,
  location: LOCATION,
  bookingMethod: { type: 'string', enum: ['online', 'phone'] },
  isVirtual: { type: 'boolean' },
  acceptingPatients: accepting,
  nextAvailableStart: dateTime,
  totalSlots: { type: 'integer', minimum: 0 },
}
const GROUP_REQUIRED = ['key', 'publisher', 'location', 'isVirtual', 'nextAvailableStart', 'totalSlots']
const PROVIDER_LOCATION = {
  type: 'object',
  required: GROUP_REQUIRED,
  properties: {
    ...GROUP_PROPERTIES,
    serviceTypes: { type: 'array', items: CODING },
    specialties: { type: 'array', items: CODING },
  },
}
const ACTOR = {
  type: 'object',
  required: GROUP_REQUIRED,
  properties: {
    ...GROUP_PROPERTIES,
    serviceTypes: { type: 'array', items: { type: 'object', properties: { code: string, display: string } } },
  },
}
const PUBLISHER = {
  type: 'object',
  required: ['slug', 'displayName', 'manifestUrl', 'enabled'],
  properties: {
    slug: string,
    displayName: string,
    manifestUrl: { type: 'string', description: "URL of the publisher's $bulk-publish manifest" },
    enabled: { type: 'boolean' },
  },
}

const listing = (name: string, items: object) => ({
  200: {
    description: `Matches, paged (${name})`,
    schema: {
      type: 'object',
      required: [name, 'total'],
      properties: { [name]: { type: 'array', items }, total },
    },
  },
  503: { description: 'The scheduling store is unavailable or slow; see Retry-After' },
})

function toActor({ serviceTypes, specialties: _specialties, ...group }: GroupMatch) {
  return { ...group, serviceTypes: serviceTypes.map(({ code, display }) => ({ code, display })) }
}

const codingList = (
  segment: string,
  name: string,
  column: 'service_types' | 'specialties',
  summary: string,
) =>
  defineEndpoint({
    method: 'GET',
    path: `/v1/scheduling/${segment}`,
    tag: 'scheduling',
    summary,
    description: 'The whole list, sorted by system then code; only codings of served slots appear.',
    params: {},
    responses: {
      200: {
        description: 'The whole list',
        schema: {
          type: 'object',
          required: [name],
          properties: { [name]: { type: 'array', items: CODING } },
        },
      },
    },
    handler: (_request, { db }) => ({ body: { [name]: listCodings(db, column) }, reuse: {} }),
  })

/** The scheduling endpoints, answering from one app's index of served series. */
export function schedulingEndpoints(index: SlotIndex): Endpoint[] {
  /** The index brought up to date, with the starts of the status the search asks for. */
  const ready = (query: URLSearchParams) => index.ready(statusAsked(query))
  /**
   * A search's answer over the filters its parameters give at `now`, reusable until the first slot served
   * from now on starts (no match can start before it) and while the index holds it true.
   */
  const reusable = <T>(params: FilterValues, now: number, search: (filters: SlotFilters) => T) => {
    const filters = toFilters(params, now)
    return {
      body: search(index.withoutWholeFilters(filters)),
      reuse: { through: answerHoldsThrough(index, filters, now), stillTrue: index.answerHolds(filters) },
    }
  }
  return [
    defineEndpoint({
      method: 'GET',
      path: '/v1/scheduling/slots',
      tag: 'scheduling',
      summary: 'Slots matching the filters, by start then id, paged',
      params: SLOT_SEARCH_PARAMS,
      responses: listing('slots', SLOT),
      ready,
      handler: ({ params }, { clock }) =>
        reusable(params, clock(), (filters) => searchSlots(index, filters, params)),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/v1/scheduling/provider-locations',
      tag: 'scheduling',
      summary: 'The same matches grouped by provider at a location, by next available start then key',
      params: SLOT_FILTER_PARAMS,
      responses: listing('providerLocations', PROVIDER_LOCATION),
      ready,
      handler: ({ params }, { clock }) =>
        reusable(params, clock(), (filters) => {
          const { groups, total } = searchGroups(index, filters, params)
          return { total, providerLocations: groups }
        }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/v1/scheduling/actors',
      tag: 'scheduling',
      summary: 'Older grouping form: one card per provider/location group',
      params: SLOT_FILTER_PARAMS,
      responses: listing('actors', ACTOR),
      ready,
      handler: ({ params }, { clock }) =>
        reusable(params, clock(), (filters) => {
          const { groups, total } = searchGroups(index, filters, params)
          return { actors: groups.map(toActor), total }
        }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/v1/scheduling/publishers',
      tag: 'scheduling',
      summary: 'Every slot publisher, enabled and disabled',
      params: {},
      responses: {
        200: {
          description: 'The whole publisher list',
          schema: {
            type: 'object',
            required: ['publishers'],
            properties: { publishers: { type: 'array', items: PUBLISHER } },
          },
        },
      },
      handler: (_request, { db }) => ({ body: { publishers: publishersShown(db) }, reuse: {} }),
    }),
    codingList('specialties', 'specialties', 'specialties', 'Every specialty coding present in served slots'),
    codingList(
      'service-types',
      'serviceTypes',
      'service_types',
      'Every service type coding present in served slots',
    ),
  ]
}
