import { z } from 'zod'
import { param } from '../api/params.js'
import type { ResourceTypeDeclaration, SearchParam, StoreDeclaration } from '../fhir/store/declaration.js'
import { storeLayout } from '../fhir/store/schema.js'
import {
  booleanParam,
  codeParam,
  idParam,
  includeParam,
  pagingParams,
  referenceParam,
  summaryCountParam,
  textParam,
  tokenParam,
} from '../fhir/store/searchParams.js'

/**
 * The provider directory's store: its resource types and search parameters. Token and reference parameters
 * carry the number their index rows are written under in release files: append, never renumber.
 */

/** The NPI identifier systems a Practitioner search accepts; the first is the one the directory indexes. */
export const NPI_SYSTEMS = [
  'http://hl7.org/fhir/sid/us-npi',
  'http://terminology.hl7.org/NamingSystem/npi',
  'urn:oid:2.16.840.1.113883.4.6',
] as const

const NPI = /^\d{10}$/

/** `<system>|<npi>` in one of the accepted NPI systems, or a bare NPI; one NPI only. Checked to the NPI. */
const practitionerIdentifier: SearchParam = {
  spec: param.custom(
    z
      .string()
      .min(1, 'must be at least 1 character long')
      .transform((value, ctx) => {
        const bar = value.lastIndexOf('|')
        const system = bar === -1 ? undefined : value.slice(0, bar)
        const npi = bar === -1 ? value : value.slice(bar + 1)
        if (system !== undefined && !(NPI_SYSTEMS as readonly string[]).includes(system)) {
          ctx.addIssue({
            code: 'custom',
            message: `system "${system}" is not accepted; use one of ${NPI_SYSTEMS.join(', ')}, or a bare NPI`,
          })
          return z.NEVER
        }
        if (npi.includes(',')) {
          ctx.addIssue({ code: 'custom', message: 'takes one NPI per search' })
          return z.NEVER
        }
        if (!NPI.test(npi)) {
          ctx.addIssue({ code: 'custom', message: 'must be a ten-digit NPI, bare or as <system>|<npi>' })
          return z.NEVER
        }
        return npi
      }),
    `<system>|<npi> or a bare ten-digit NPI. Accepted systems: ${NPI_SYSTEMS.join(', ')}; responses carry ${NPI_SYSTEMS[0]}. One NPI per search.`,
    'token',
  ),
  role: { kind: 'criterion' },
  index: { kind: 'token', number: 1, paths: ['identifier'] },
  criteria: (value) => [{ kind: 'token', param: 1, code: String(value), systems: NPI_SYSTEMS }],
  // The remote directory is asked in the system this one indexes.
  remote: (value) => [`${NPI_SYSTEMS[0]}|${String(value)}`],
}

const ENDPOINT_CONNECTION_TYPES = [
  'ihe-xcpd',
  'ihe-xca',
  'ihe-xdr',
  'ihe-xds',
  'ihe-iid',
  'dicom-wado-rs',
  'dicom-qido-rs',
  'dicom-stow-rs',
  'dicom-wado-uri',
  'hl7-fhir-rest',
  'hl7-fhir-msg',
  'hl7v2-mllp',
  'secure-email',
  'direct-project',
] as const

/** Page sizes of every directory search: 1..100, larger refused (never reduced). */
const COUNT = { max: 100, default: 10 }
const paging = pagingParams(COUNT)
const NAME_SEARCHES = ['name', 'family', 'given'] as const

const placeNarrower = (column: 'city' | 'state', what: string, of?: readonly string[], max?: number) =>
  textParam({
    column,
    paths: [`address.${column}`],
    match: 'phrase',
    description: `Narrows a ${of ? 'name ' : ''}search to ${what} with an address in this ${column}; cannot stand alone.`,
    role: { kind: 'narrows', of },
    max,
  })

const practitioner: ResourceTypeDeclaration = {
  type: 'Practitioner',
  search: {
    count: COUNT,
    total: false,
    params: {
      identifier: practitionerIdentifier,
      name: textParam({
        column: 'name',
        paths: ['name.text', 'name.prefix', 'name.given', 'name.family', 'name.suffix'],
        match: 'words',
        description:
          'Matches across the whole name: every word prefixes a word of the name (case and accents ignored).',
      }),
      family: textParam({
        column: 'family',
        paths: ['name.family'],
        match: 'words',
        description: 'Family name, word by word as a prefix.',
      }),
      given: textParam({
        column: 'given',
        paths: ['name.given'],
        match: 'words',
        description: 'A given name, word by word as a prefix.',
      }),
      'address-city': placeNarrower('city', 'practitioners', NAME_SEARCHES),
      'address-state': placeNarrower('state', 'practitioners', NAME_SEARCHES, 64),
      _include: includeParam(
        ['PractitionerRole:practitioner'] as const,
        'PractitionerRole:practitioner adds the roles to the bundle.',
        false,
      ),
      ...paging,
    },
    includes: { 'PractitionerRole:practitioner': { kind: 'reverse', from: 'PractitionerRole', param: 1 } },
  },
}

const practitionerRole: ResourceTypeDeclaration = {
  type: 'PractitionerRole',
  search: {
    count: COUNT,
    total: true,
    params: {
      practitioner: referenceParam({
        number: 1,
        paths: ['practitioner'],
        target: 'Practitioner',
        description: 'A Practitioner id or Practitioner/<id>; required unless page is given.',
        allowUrl: false,
      }),
      ...paging,
    },
  },
}

const organizationReference = (number: number, paths: readonly string[], description: string) =>
  referenceParam({ number, paths, target: 'Organization', description, allowUrl: true })

const organizationAffiliation: ResourceTypeDeclaration = {
  type: 'OrganizationAffiliation',
  search: {
    count: COUNT,
    total: true,
    params: {
      network: organizationReference(2, ['network'], 'Affiliations listed in one insurance network.'),
      // For a network the primary organization is the network itself (spec, OrganizationAffiliation).
      'primary-organization': organizationReference(
        3,
        ['organization', 'network'],
        'Affiliations whose primary organization is the given one (for a network, the network itself).',
      ),
      'participating-organization': {
        ...organizationReference(
          4,
          ['participatingOrganization'],
          'Affiliations one organization participates in; beside network, whether the directory lists it in that network.',
        ),
        // One organization's affiliations are few, a network's many: it drives the scan.
        priority: -1,
      },
      active: booleanParam({
        number: 9,
        paths: ['active'],
        description: 'true or false; narrows; cannot stand alone.',
        role: { kind: 'narrows' },
      }),
      _include: includeParam(
        [
          'OrganizationAffiliation:participating-organization',
          'OrganizationAffiliation:primary-organization',
          'OrganizationAffiliation:network',
        ] as const,
        'Adds the referenced organizations; repeatable, 1..16.',
        true,
      ),
      _id: idParam(),
      _summary: summaryCountParam(),
      ...paging,
    },
    includes: {
      'OrganizationAffiliation:participating-organization': {
        kind: 'forward',
        param: 'participating-organization',
      },
      'OrganizationAffiliation:primary-organization': { kind: 'forward', param: 'primary-organization' },
      'OrganizationAffiliation:network': { kind: 'forward', param: 'network' },
    },
  },
}

const endpoint: ResourceTypeDeclaration = {
  type: 'Endpoint',
  search: {
    count: COUNT,
    total: true,
    params: {
      organization: organizationReference(5, ['managingOrganization'], 'Endpoints one organization manages.'),
      'connection-type': tokenParam({
        number: 7,
        paths: ['connectionType'],
        description:
          'A code of http://terminology.hl7.org/CodeSystem/endpoint-connection-type, bare or system|code; narrows only.',
        closed: {
          system: 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type',
          codes: ENDPOINT_CONNECTION_TYPES,
        },
        role: { kind: 'narrows' },
      }),
      status: codeParam({
        number: 8,
        paths: ['status'],
        values: ['active', 'suspended', 'error', 'off', 'entered-in-error', 'test'] as const,
        description: 'Endpoint status; narrows only.',
        role: { kind: 'narrows' },
      }),
      name: textParam({
        column: 'name',
        paths: ['name'],
        match: 'words',
        description: 'Matches the endpoint name; narrows only.',
        role: { kind: 'narrows' },
      }),
      _include: includeParam(
        ['Endpoint:organization'] as const,
        'Endpoint:organization adds the managing organizations.',
        true,
      ),
      _id: idParam(),
      _summary: summaryCountParam(),
      ...paging,
    },
    includes: {
      'Endpoint:organization': { kind: 'forward', param: 'organization' },
    },
  },
}

const organization: ResourceTypeDeclaration = {
  type: 'Organization',
  search: {
    count: COUNT,
    total: true,
    params: {
      _id: idParam(),
      identifier: tokenParam({
        number: 2,
        paths: ['identifier'],
        description: 'An identifier: value or system|value.',
      }),
      name: textParam({
        column: 'name',
        paths: ['name', 'alias'],
        match: 'words',
        description: 'Matches the name or an alias: every word prefixes a word of it.',
      }),
      type: tokenParam({
        number: 3,
        paths: ['type'],
        description: 'Organization type: code or system|code (e.g. prvgrp, payer, ntwk).',
      }),
      'address-city': placeNarrower('city', 'organizations'),
      'address-state': placeNarrower('state', 'organizations', undefined, 64),
      _summary: summaryCountParam(),
      ...paging,
    },
  },
}

const healthcareService: ResourceTypeDeclaration = {
  type: 'HealthcareService',
  search: {
    count: COUNT,
    total: true,
    params: {
      _id: idParam(),
      identifier: tokenParam({
        number: 4,
        paths: ['identifier'],
        description: 'An identifier: value or system|value.',
      }),
      name: textParam({
        column: 'name',
        paths: ['name'],
        match: 'words',
        description: 'Matches the service name: every word prefixes a word of it.',
      }),
      organization: organizationReference(6, ['providedBy'], 'Services an organization provides.'),
      location: referenceParam({
        number: 7,
        paths: ['location'],
        target: 'Location',
        description: 'Services offered at a location.',
        allowUrl: true,
      }),
      'service-type': tokenParam({
        number: 5,
        paths: ['type'],
        description: 'Service type: code or system|code.',
      }),
      specialty: tokenParam({
        number: 6,
        paths: ['specialty'],
        description: 'Specialty: code or system|code.',
      }),
      _summary: summaryCountParam(),
      ...paging,
    },
  },
}

/** Location is read only (spec): it has no search. */
const location: ResourceTypeDeclaration = { type: 'Location' }

/**
 * The directory's InsurancePlans (Plan-Net publishes each with its MA or HIOS identifier and its networks):
 * held to bridge a plan of the Plan Benefits service to its networks; `/InsurancePlan` itself is that
 * service's.
 */
const insurancePlan: ResourceTypeDeclaration = {
  type: 'InsurancePlan',
  internal: true,
  search: {
    count: COUNT,
    total: false,
    params: {
      identifier: tokenParam({
        number: 10,
        paths: ['identifier'],
        description: 'An identifier: value or system|value.',
      }),
      ...paging,
    },
  },
}

export type DirectoryType =
  | 'Practitioner'
  | 'PractitionerRole'
  | 'Organization'
  | 'OrganizationAffiliation'
  | 'Location'
  | 'Endpoint'
  | 'HealthcareService'
  | 'InsurancePlan'

export const DIRECTORY_STORE: StoreDeclaration = {
  name: 'directory',
  prefix: 'dir',
  types: [
    practitioner,
    practitionerRole,
    organization,
    organizationAffiliation,
    location,
    endpoint,
    healthcareService,
    insurancePlan,
  ],
}

export const DIRECTORY_LAYOUT = storeLayout(DIRECTORY_STORE)
