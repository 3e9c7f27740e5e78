import { z } from 'zod'
import { asFhirType, param } from '../api/params.js'
import { FHIR_BASE, type ParamIssue } from '../http/errors.js'
import { ID_PATTERN, NPI_SYSTEMS } from './model.js'

/** Page sizes of every directory search: 1..100, larger refused (never reduced). */
export const MAX_COUNT = 100
export const DEFAULT_COUNT = 10

const WORD = /[\p{L}\p{N}]/u

/** A reference value as given: bare id, `<Type>/<id>`, or an absolute URL (checked against our base later). */
export interface RefValue {
  id: string
  /** Set when the value was an absolute URL: the base it names, to be checked as ours. */
  url?: string
}

function reference(type: string, description: string, allowUrl: boolean) {
  const article = /^[AEIOU]/.test(type) ? 'an' : 'a'
  const forms = `${article} ${type} id${allowUrl ? `, ${type}/<id> or a fullUrl returned by this service` : ` or ${type}/<id>`}`
  const schema = z
    .string()
    .min(1, 'must be at least 1 character long')
    .max(256, 'must be at most 256 characters long')
    .transform((value, ctx): RefValue => {
      const bare = ID_PATTERN.test(value) ? value : undefined
      if (bare) return { id: bare }
      const relative = new RegExp(`^${type}/([A-Za-z0-9\\-.]{1,64})$`).exec(value)
      if (relative?.[1]) return { id: relative[1] }
      const absolute = allowUrl
        ? new RegExp(`^(https?://.+)/${type}/([A-Za-z0-9\\-.]{1,64})$`).exec(value)
        : null
      if (absolute?.[1] && absolute[2]) return { id: absolute[2], url: absolute[1] }
      ctx.addIssue({ code: 'custom', message: `must be ${forms}` })
      return z.NEVER
    })
  return param.custom(schema, description, 'reference')
}

/** `code` or `system|code`; `allowed` limits the codes (and `system` the system) when the code system is closed. */
function token(description: string, closed?: { system: string; codes: readonly string[] }) {
  const schema = z
    .string()
    .min(1, 'must be at least 1 character long')
    .max(256, 'must be at most 256 characters long')
    .transform((value, ctx): { system?: string; code: string } => {
      const bar = value.indexOf('|')
      const system = bar === -1 ? undefined : value.slice(0, bar)
      const code = bar === -1 ? value : value.slice(bar + 1)
      if (code === '' || system === '') {
        ctx.addIssue({ code: 'custom', message: 'must be a code or system|code, both non-empty' })
        return z.NEVER
      }
      if (closed && system !== undefined && system !== closed.system) {
        ctx.addIssue({ code: 'custom', message: `system must be ${closed.system}` })
        return z.NEVER
      }
      if (closed && !closed.codes.includes(code)) {
        ctx.addIssue({ code: 'custom', message: `code must be one of ${closed.codes.join(', ')}` })
        return z.NEVER
      }
      return system === undefined ? { code } : { system, code }
    })
  return param.custom(schema, description, 'token')
}

function name(description: string, max = 100) {
  const schema = z
    .string()
    .min(1, 'must be at least 1 character long')
    .max(max, `must be at most ${max} characters long`)
    .regex(WORD, 'must contain a letter or a digit')
  return param.custom(schema, description, 'string')
}

const NPI = /^\d{10}$/

/** `<system>|<npi>` in one of the accepted NPI systems, or a bare NPI; one NPI only. Parsed to the NPI. */
const npiIdentifier = param.custom(
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
)

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

const includes = <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
  param.repeatable(
    z.enum(values, { error: `must be one of ${values.join(', ')}` }),
    description,
    16,
    'special',
  )

const identifierToken = (description: string) => token(description)

/** Declarations shared by every directory search. */
const paging = {
  _count: param.integer(
    1,
    MAX_COUNT,
    `Page size, 1..${MAX_COUNT} (default ${DEFAULT_COUNT}); a larger value is refused, not reduced.`,
  ),
  page: asFhirType(
    param.string(
      'Opaque continuation cursor from a `next` link; expires. Carries the whole search: send it alone.',
      { max: 8192 },
    ),
    'special',
  ),
}
const idParam = asFhirType(param.string('Resource id', { max: 64, pattern: ID_PATTERN }), 'token')
const summaryCount = param.enumeration(
  ['count'] as const,
  'count: answer the number of matches as `total`, with no entries; not with _include, _revinclude, _count or page.',
)

export const SEARCH_PARAMS = {
  Practitioner: {
    identifier: npiIdentifier,
    name: name(
      'Matches across the whole name: every word prefixes a word of the name (case and accents ignored).',
    ),
    family: name('Family name, word by word as a prefix.'),
    given: name('A given name, word by word as a prefix.'),
    'address-city': name(
      'Narrows a name search to practitioners with an address in this city; cannot stand alone.',
    ),
    'address-state': name(
      'Narrows a name search to practitioners with an address in this state; cannot stand alone.',
      64,
    ),
    _include: asFhirType(
      param.enumeration(
        ['PractitionerRole:practitioner'] as const,
        'PractitionerRole:practitioner adds the roles to the bundle.',
      ),
      'special',
    ),
    ...paging,
  },
  PractitionerRole: {
    practitioner: reference(
      'Practitioner',
      'A Practitioner id or Practitioner/<id>; required unless page is given.',
      false,
    ),
    ...paging,
  },
  OrganizationAffiliation: {
    network: reference('Organization', 'Affiliations listed in one insurance network.', true),
    'primary-organization': reference(
      'Organization',
      'Affiliations whose primary organization is the given one (for a network, the network itself).',
      true,
    ),
    'participating-organization': reference(
      'Organization',
      'Affiliations one organization participates in; beside network, whether the directory lists it in that network.',
      true,
    ),
    active: param.boolean('true or false; narrows; cannot stand alone.'),
    _include: includes(
      [
        'OrganizationAffiliation:participating-organization',
        'OrganizationAffiliation:primary-organization',
        'OrganizationAffiliation:network',
      ] as const,
      'Adds the referenced organizations; repeatable, 1..16.',
    ),
    _id: idParam,
    _summary: summaryCount,
    ...paging,
  },
  Endpoint: {
    organization: reference('Organization', 'Endpoints one organization manages.', true),
    'connection-type': token(
      'A code of http://terminology.hl7.org/CodeSystem/endpoint-connection-type, bare or system|code; narrows only.',
      {
        system: 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type',
        codes: ENDPOINT_CONNECTION_TYPES,
      },
    ),
    status: param.enumeration(
      ['active', 'suspended', 'error', 'off', 'entered-in-error', 'test'] as const,
      'Endpoint status; narrows only.',
    ),
    name: name('Matches the endpoint name; narrows only.'),
    _include: includes(
      ['Endpoint:organization'] as const,
      'Endpoint:organization adds the managing organizations.',
    ),
    _id: idParam,
    _summary: summaryCount,
    ...paging,
  },
  Organization: {
    _id: idParam,
    identifier: identifierToken('An identifier: value or system|value.'),
    name: name('Matches the name or an alias: every word prefixes a word of it.'),
    type: token('Organization type: code or system|code (e.g. prvgrp, payer, ntwk).'),
    'address-city': name(
      'Narrows a search to organizations with an address in this city; cannot stand alone.',
    ),
    'address-state': name(
      'Narrows a search to organizations with an address in this state; cannot stand alone.',
      64,
    ),
    _summary: summaryCount,
    ...paging,
  },
  HealthcareService: {
    _id: idParam,
    identifier: identifierToken('An identifier: value or system|value.'),
    name: name('Matches the service name: every word prefixes a word of it.'),
    organization: reference('Organization', 'Services an organization provides.', true),
    location: reference('Location', 'Services offered at a location.', true),
    'service-type': token('Service type: code or system|code.'),
    specialty: token('Specialty: code or system|code.'),
    _summary: summaryCount,
    ...paging,
  },
} as const

export type SearchKind = keyof typeof SEARCH_PARAMS
export type SearchValues = Record<string, unknown>

/** What a search may be driven by; the other parameters only narrow. */
const CRITERIA: Record<SearchKind, string[]> = {
  Practitioner: ['identifier', 'name', 'family', 'given'],
  PractitionerRole: ['practitioner'],
  OrganizationAffiliation: ['network', 'primary-organization', 'participating-organization', '_id'],
  Endpoint: ['organization', '_id'],
  Organization: ['_id', 'identifier', 'name', 'type'],
  HealthcareService: ['_id', 'identifier', 'name', 'organization', 'location', 'service-type', 'specialty'],
}

/** Parameters that carry no criterion of their own. */
const NEUTRAL = new Set(['_count', 'page', '_format', '_include', '_summary'])
const PRACTITIONER_NAMES = ['name', 'family', 'given']

const given = (values: SearchValues, name: string) => values[name] !== undefined

/** Cross-parameter rules: page alone, something to search by, narrowers not alone, _summary=count exclusions. */
export function searchRules(kind: SearchKind, values: SearchValues, baseUrl: string): ParamIssue[] {
  const issues: ParamIssue[] = []
  const sent = Object.keys(values).filter((name) => given(values, name) && name !== '_format')
  if (given(values, 'page')) {
    for (const name of sent.filter((name) => name !== 'page')) {
      issues.push({
        path: [name],
        message: `"${name}" cannot be sent with page: the cursor carries the whole search`,
      })
    }
    return issues
  }
  const criteria = CRITERIA[kind]
  const hasCriterion = criteria.some((name) => given(values, name))
  if (!hasCriterion) {
    const narrowers = sent.filter((name) => !NEUTRAL.has(name) && !criteria.includes(name))
    if (narrowers.length > 0) {
      const needed = kind === 'Practitioner' ? PRACTITIONER_NAMES : criteria
      for (const name of narrowers) {
        issues.push({
          path: [name],
          message: `"${name}" narrows a search and cannot stand alone; give ${needed.join(', ')} as well`,
        })
      }
    } else {
      issues.push({
        path: [criteria[0] ?? 'page'],
        message: `A ${kind} search needs ${criteria.join(', ')} or page`,
      })
    }
  }
  if (kind === 'Practitioner' && !PRACTITIONER_NAMES.some((name) => given(values, name))) {
    for (const name of ['address-city', 'address-state'].filter((name) => given(values, name))) {
      if (hasCriterion)
        issues.push({
          path: [name],
          message: `"${name}" narrows a name search; give name, family or given with it`,
        })
    }
  }
  if (values._summary === 'count') {
    for (const name of ['_include', '_count'].filter((name) => given(values, name))) {
      issues.push({ path: [name], message: `"${name}" cannot be combined with _summary=count` })
    }
  }
  for (const [name, value] of Object.entries(values)) {
    const url = (value as RefValue | undefined)?.url
    if (url !== undefined && url !== `${baseUrl}${FHIR_BASE}`) {
      issues.push({
        path: [name],
        message: `"${name}" names an address on another server (${url}); give an id, a <Type>/<id> reference or a fullUrl of this service`,
      })
    }
  }
  return issues
}
