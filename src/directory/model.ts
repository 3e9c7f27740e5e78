/** The resource types the directory stores and serves. Other types in a release (InsurancePlan…) are skipped. */
export const DIRECTORY_TYPES = [
  'Practitioner',
  'PractitionerRole',
  'Organization',
  'OrganizationAffiliation',
  'Location',
  'Endpoint',
  'HealthcareService',
] as const

export type DirectoryType = (typeof DIRECTORY_TYPES)[number]

export const isDirectoryType = (type: unknown): type is DirectoryType =>
  (DIRECTORY_TYPES as readonly unknown[]).includes(type)

/** FHIR's id rule, as the spec states it for Location, OrganizationAffiliation and `_id`. */
export const ID_PATTERN = /^[A-Za-z0-9\-.]{1,64}$/

/** The NPI identifier systems a Practitioner search accepts; the first is the one the directory indexes. */
export const NPI_SYSTEMS = [
  'http://hl7.org/fhir/sid/us-npi',
  'http://terminology.hl7.org/NamingSystem/npi',
  'urn:oid:2.16.840.1.113883.4.6',
] as const

/**
 * Search parameters indexed at import, stored as small integers in dir_token / dir_ref. The numbers are
 * written into the database: append, never renumber.
 */
export const TOKEN_PARAMS = {
  practitionerIdentifier: 1,
  organizationIdentifier: 2,
  organizationType: 3,
  serviceIdentifier: 4,
  serviceType: 5,
  serviceSpecialty: 6,
  endpointConnectionType: 7,
  endpointStatus: 8,
  affiliationActive: 9,
} as const

export const REF_PARAMS = {
  rolePractitioner: 1,
  affiliationNetwork: 2,
  affiliationPrimary: 3,
  affiliationParticipating: 4,
  endpointOrganization: 5,
  serviceOrganization: 6,
  serviceLocation: 7,
} as const

/** Full-text name columns per searchable type (FTS5 tables `dir_name_<type>`). */
export const NAME_COLUMNS = {
  Practitioner: ['name', 'family', 'given', 'city', 'state'],
  Organization: ['name', 'city', 'state'],
  HealthcareService: ['name'],
  Endpoint: ['name'],
} as const satisfies Partial<Record<DirectoryType, readonly string[]>>

export type NamedType = keyof typeof NAME_COLUMNS

export const nameTable = (type: NamedType) => `dir_name_${type.toLowerCase()}`
