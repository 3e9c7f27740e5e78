import { type DirectoryType, NAME_COLUMNS, type NamedType, REF_PARAMS, TOKEN_PARAMS } from './model.js'

/** The search columns of one resource, derived at import; the resource itself is stored as published. */
export interface SearchRows {
  tokens: [param: number, system: string, code: string][]
  refs: [param: number, target: string][]
  /** One text per NAME_COLUMNS column of the type, or undefined when the type has no name search. */
  names?: string[]
}

type Json = Record<string, unknown>

const list = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value]
const objects = (value: unknown): Json[] =>
  list(value).filter((item): item is Json => typeof item === 'object' && item !== null)
const text = (value: unknown): string[] =>
  list(value).filter((item): item is string => typeof item === 'string')

const referencePatterns = new Map<string, RegExp>()

/** The id a Reference points at when it names `type` (relative, absolute or versioned). */
export function referencedId(reference: unknown, type: string): string | undefined {
  const value = (reference as Json | undefined)?.reference
  if (typeof value !== 'string') return undefined
  let pattern = referencePatterns.get(type)
  if (!pattern) {
    pattern = new RegExp(`(?:^|/)${type}/([A-Za-z0-9\\-.]{1,64})(?:/_history/[^/]*)?$`)
    referencePatterns.set(type, pattern)
  }
  return pattern.exec(value)?.[1]
}

/** Each row once: a resource has a handful, so a scan beats building a key per row for a Set. */
class Collector {
  readonly rows: SearchRows = { tokens: [], refs: [] }

  token(param: number, system: unknown, code: unknown): void {
    if (typeof code !== 'string' || code === '') return
    const sys = typeof system === 'string' ? system : ''
    if (this.rows.tokens.some(([p, s, c]) => p === param && s === sys && c === code)) return
    this.rows.tokens.push([param, sys, code])
  }

  codings(param: number, concepts: unknown): void {
    for (const concept of objects(concepts)) {
      for (const coding of objects(concept.coding)) this.token(param, coding.system, coding.code)
    }
  }

  identifiers(param: number, identifiers: unknown): void {
    for (const identifier of objects(identifiers)) this.token(param, identifier.system, identifier.value)
  }

  ref(param: number, references: unknown, type: string): void {
    for (const reference of objects(references)) {
      const target = referencedId(reference, type)
      if (target === undefined) continue
      if (this.rows.refs.some(([p, t]) => p === param && t === target)) continue
      this.rows.refs.push([param, target])
    }
  }
}

const joined = (values: string[]) => values.join(' ; ')

function addressColumns(addresses: unknown): { city: string; state: string } {
  const all = objects(addresses)
  return {
    city: joined(all.flatMap((address) => text(address.city))),
    state: joined(all.flatMap((address) => text(address.state))),
  }
}

function practitionerNames(resource: Json): Record<string, string> {
  const names = objects(resource.name)
  const family = names.flatMap((name) => text(name.family))
  const given = names.flatMap((name) => text(name.given))
  const whole = names.flatMap((name) => [
    ...text(name.text),
    ...text(name.prefix),
    ...text(name.given),
    ...text(name.family),
    ...text(name.suffix),
  ])
  return {
    name: joined(whole),
    family: joined(family),
    given: joined(given),
    ...addressColumns(resource.address),
  }
}

function nameColumns(type: NamedType, resource: Json): string[] {
  const values: Record<string, string> =
    type === 'Practitioner'
      ? practitionerNames(resource)
      : type === 'Organization'
        ? {
            name: joined([...text(resource.name), ...text(resource.alias)]),
            ...addressColumns(resource.address),
          }
        : { name: joined(text(resource.name)) }
  return NAME_COLUMNS[type].map((column) => values[column] ?? '')
}

export function deriveSearchRows(type: DirectoryType, resource: Json): SearchRows {
  const out = new Collector()
  switch (type) {
    case 'Practitioner':
      out.identifiers(TOKEN_PARAMS.practitionerIdentifier, resource.identifier)
      break
    case 'PractitionerRole':
      out.ref(REF_PARAMS.rolePractitioner, resource.practitioner, 'Practitioner')
      break
    case 'Organization':
      out.identifiers(TOKEN_PARAMS.organizationIdentifier, resource.identifier)
      out.codings(TOKEN_PARAMS.organizationType, resource.type)
      break
    case 'OrganizationAffiliation':
      out.ref(REF_PARAMS.affiliationNetwork, resource.network, 'Organization')
      out.ref(REF_PARAMS.affiliationParticipating, resource.participatingOrganization, 'Organization')
      // For a network the primary organization is the network itself (spec, OrganizationAffiliation).
      out.ref(REF_PARAMS.affiliationPrimary, resource.organization, 'Organization')
      out.ref(REF_PARAMS.affiliationPrimary, resource.network, 'Organization')
      if (typeof resource.active === 'boolean')
        out.token(TOKEN_PARAMS.affiliationActive, '', String(resource.active))
      break
    case 'Endpoint':
      out.ref(REF_PARAMS.endpointOrganization, resource.managingOrganization, 'Organization')
      for (const coding of objects(resource.connectionType))
        out.token(TOKEN_PARAMS.endpointConnectionType, coding.system, coding.code)
      out.token(TOKEN_PARAMS.endpointStatus, '', resource.status)
      break
    case 'HealthcareService':
      out.identifiers(TOKEN_PARAMS.serviceIdentifier, resource.identifier)
      out.codings(TOKEN_PARAMS.serviceType, resource.type)
      out.codings(TOKEN_PARAMS.serviceSpecialty, resource.specialty)
      out.ref(REF_PARAMS.serviceOrganization, resource.providedBy, 'Organization')
      out.ref(REF_PARAMS.serviceLocation, resource.location, 'Location')
      break
    case 'Location':
      break
  }
  if (type in NAME_COLUMNS) out.rows.names = nameColumns(type as NamedType, resource)
  return out.rows
}
