import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A publisher in the HL7 STU 1 form, written for the tests: PractitionerRoles with NPIs and specialties,
 * patient-type, a virtual location, multi-actor schedules, a schedule naming only its role, a healthcare service
 * as provider, booking-phone as ContactPoint, lenient timestamps, an output type the service ignores, and two
 * bad lines.
 */
const EXT = 'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/'
const NPI = 'http://hl7.org/fhir/sid/us-npi'
const SNOMED = 'http://snomed.info/sct'
const NUCC = 'http://nucc.org/provider-taxonomy'
const SERVICE_TYPE = 'http://terminology.hl7.org/CodeSystem/service-type'
const ACCEPTING = 'http://terminology.hl7.org/CodeSystem/accepting-patients'

const patientType = (code: string) => ({
  url: `${EXT}patient-type`,
  valueCoding: { system: ACCEPTING, code },
})
const serviceType = (code: string, display: string) => [{ coding: [{ system: SERVICE_TYPE, code, display }] }]

const locations = [
  {
    resourceType: 'Location',
    id: 'loc-pittsfield',
    name: 'Berkshire Family Medicine - Pittsfield',
    telecom: [{ system: 'phone', value: '413-555-0100' }],
    address: { line: ['1 North St'], city: 'Pittsfield', state: 'MA', postalCode: '01201' },
  },
  {
    resourceType: 'Location',
    id: 'loc-virtual',
    name: 'Berkshire Telehealth',
    physicalType: {
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/location-physical-type', code: 'vi' }],
    },
    address: { city: 'Boston', state: 'MA' },
  },
]

const practitioners = [
  {
    resourceType: 'Practitioner',
    id: 'prac-smith',
    identifier: [{ system: NPI, value: '1234567893' }],
    name: [{ family: 'Smith', given: ['John'], prefix: ['Dr.'] }],
  },
  {
    resourceType: 'Practitioner',
    id: 'prac-jones',
    identifier: [{ system: 'urn:oid:2.16.840.1.113883.4.6', value: '1987654321' }],
    name: [{ text: 'Dr. Ann Jones' }],
  },
]

const roles = [
  {
    resourceType: 'PractitionerRole',
    id: 'role-smith',
    identifier: [{ system: NPI, value: '1234567893' }],
    practitioner: { reference: 'Practitioner/prac-smith' },
    specialty: [{ coding: [{ system: SNOMED, code: '394802001', display: 'General medicine' }] }],
    location: [{ reference: 'Location/loc-pittsfield' }],
  },
  {
    resourceType: 'PractitionerRole',
    id: 'role-jones',
    practitioner: { reference: 'Practitioner/prac-jones' },
    specialty: [{ coding: [{ system: NUCC, code: '207Q00000X', display: 'Family Medicine' }] }],
  },
]

const services = [
  {
    resourceType: 'HealthcareService',
    id: 'hs-flu',
    name: 'Walk-in flu clinic',
    identifier: [{ system: NPI, value: '1112223334' }],
  },
]

const schedules = [
  {
    resourceType: 'Schedule',
    id: 'sch-smith',
    serviceType: serviceType('124', 'General Practice'),
    actor: [{ reference: 'Location/loc-pittsfield' }, { reference: 'PractitionerRole/role-smith' }],
    extension: [
      {
        url: `${EXT}schedule-specialty`,
        valueCoding: { system: SNOMED, code: '419772000', display: 'Family practice' },
      },
    ],
  },
  {
    resourceType: 'Schedule',
    id: 'sch-jones',
    serviceType: serviceType('124', 'General Practice'),
    actor: [{ reference: 'Location/loc-virtual' }, { reference: 'PractitionerRole/role-jones' }],
  },
  {
    resourceType: 'Schedule',
    id: 'sch-smith-role-only',
    serviceType: serviceType('57', 'Immunization'),
    actor: [{ reference: 'PractitionerRole/role-smith' }],
  },
  {
    resourceType: 'Schedule',
    id: 'sch-flu',
    serviceType: serviceType('57', 'Immunization'),
    actor: [{ reference: 'Location/loc-pittsfield' }, { reference: 'HealthcareService/hs-flu' }],
  },
  {
    resourceType: 'Schedule',
    id: 'sch-walkin',
    serviceType: serviceType('57', 'Immunization'),
    actor: [{ reference: 'Location/loc-pittsfield' }],
  },
]

function slot(id: string, schedule: string, start: string, end: string, more: Record<string, unknown> = {}) {
  return {
    resourceType: 'Slot',
    id,
    schedule: { reference: `Schedule/${schedule}` },
    status: 'free',
    start,
    end,
    ...more,
  }
}

const link = (id: string) => ({ url: `${EXT}booking-deep-link`, valueUrl: `https://book.example.org/${id}` })
const phone = { url: `${EXT}booking-phone`, valueContactPoint: { system: 'phone', value: '413-555-0123' } }

export const STU1_SLOTS = [
  // Written with a -05 offset and no seconds, as real feeds do: 09:00-05 is 14:00Z.
  slot('s1', 'sch-smith', '2026-11-23T09:00-05', '2026-11-23T09:30-05', {
    extension: [link('s1'), phone, patientType('newpt')],
  }),
  slot('s2', 'sch-smith', '2026-11-23T10:00:00-05:00', '2026-11-23T10:30:00-05:00', {
    extension: [link('s2'), patientType('existptonly')],
  }),
  slot('s3', 'sch-smith', '2026-11-24T14:00:00Z', '2026-11-24T14:30:00Z', { extension: [phone] }),
  slot('s4', 'sch-smith', '2026-11-24T15:00:00Z', '2026-11-24T15:30:00Z', { status: 'busy' }),
  slot('s5', 'sch-smith', '2026-11-20T15:00:00Z', '2026-11-20T15:30:00Z'),
  slot('j1', 'sch-jones', '2026-11-22T13:00:00Z', '2026-11-22T13:20:00Z', {
    extension: [link('j1'), patientType('existptfam')],
  }),
  slot('j2', 'sch-jones', '2026-11-25T13:00:00Z', '2026-11-25T13:20:00Z', {
    extension: [link('j2'), patientType('existptfam')],
  }),
  slot('r1', 'sch-smith-role-only', '2026-11-22T16:00:00Z', '2026-11-22T16:15:00Z', {
    extension: [patientType('nopt')],
  }),
  slot('f1', 'sch-flu', '2026-11-22T15:00:00Z', '2026-11-22T15:10:00Z', {
    serviceType: [{ coding: [{ system: 'https://example.org/services', code: 'flu', display: 'Flu shot' }] }],
    appointmentType: { coding: [{ code: 'WALKIN' }] },
  }),
  slot('f2', 'sch-flu', '2026-11-22T15:10:00Z', '2026-11-22T15:20:00Z', {
    serviceType: [{ coding: [{ system: 'https://example.org/services', code: 'flu', display: 'Flu shot' }] }],
    appointmentType: { coding: [{ code: 'WALKIN' }] },
  }),
  slot('w1', 'sch-walkin', '2026-11-22T15:05:00Z', '2026-11-22T15:30:00Z', {
    extension: [{ url: `${EXT}slot-capacity`, valueInteger: 5 }],
  }),
]

/** Writes the feed into `dir`; returns the bad lines it planted, as `file:line`. */
export function writeStu1Feed(dir: string, transactionTime = '2026-11-21T08:00:00Z'): string[] {
  mkdirSync(dir, { recursive: true })
  const ndjson = (records: unknown[]) => `${records.map((record) => JSON.stringify(record)).join('\n')}\n`
  writeFileSync(join(dir, 'locations.ndjson'), ndjson(locations))
  writeFileSync(join(dir, 'practitioners.ndjson'), ndjson(practitioners))
  writeFileSync(join(dir, 'roles.ndjson'), ndjson(roles))
  writeFileSync(join(dir, 'services.ndjson'), ndjson(services))
  writeFileSync(join(dir, 'schedules.ndjson'), ndjson(schedules))
  writeFileSync(join(dir, 'devices.ndjson'), ndjson([{ resourceType: 'Device', id: 'd1' }]))
  const slotLines = [
    ...STU1_SLOTS.slice(0, 6).map((record) => JSON.stringify(record)),
    '{"resourceType":"Slot", broken',
    ...STU1_SLOTS.slice(6).map((record) => JSON.stringify(record)),
    JSON.stringify(slot('x1', 'sch-missing', '2026-11-22T15:00:00Z', '2026-11-22T15:30:00Z')),
  ]
  writeFileSync(join(dir, 'slots.ndjson'), `${slotLines.join('\n')}\n`)
  const output = [
    ['Slot', 'slots.ndjson'],
    ['Schedule', 'schedules.ndjson'],
    ['Location', 'locations.ndjson'],
    ['Practitioner', 'practitioners.ndjson'],
    ['PractitionerRole', 'roles.ndjson'],
    ['HealthcareService', 'services.ndjson'],
    ['Device', 'devices.ndjson'],
  ].map(([type, url]) => ({ type, url }))
  writeFileSync(
    join(dir, '$bulk-publish'),
    JSON.stringify({ transactionTime, request: '$bulk-publish', output, error: [] }),
  )
  return ['slots.ndjson:7', `slots.ndjson:${slotLines.length}`]
}

/** The slots the default search (free, from now, never nopt) should return, by resource id. */
export const STU1_DEFAULT_MATCHES = ['s1', 's2', 's3', 'j1', 'j2', 'f1', 'f2', 'w1']
