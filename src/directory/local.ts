import type { Db } from '../db/open.js'
import { ApiError } from '../http/errors.js'
import { referencedId } from './derive.js'
import { type DirectoryType, type NamedType, NPI_SYSTEMS, REF_PARAMS, TOKEN_PARAMS } from './model.js'
import { DEFAULT_COUNT, type RefValue, type SearchKind, type SearchValues } from './params.js'
import type { DirectorySource, SearchPage } from './source.js'
import { type Criterion, DirectoryStore } from './store.js'

type Resource = Record<string, unknown>
type Token = { system?: string; code: string }

/** What a local cursor carries: the checked parameters, the last rid served, the release, the total. */
interface LocalState {
  p: SearchValues
  a: number
  r: number
  t?: number
}

/** One FTS5 phrase per word, each matching as a prefix: FHIR string search, word by word. */
function words(column: string, value: string): string[] {
  return value
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word))
    .map((word) => `${column} : "${word.replaceAll('"', '""')}"*`)
}

/** A place name matches as one phrase whose last word may be a prefix ("north hav" finds North Haven). */
const phrase = (column: string, value: string) => `${column} : "${value.replaceAll('"', '""')}"*`

function nameCriterion(type: NamedType, values: SearchValues, columns: Record<string, string>): Criterion[] {
  const parts: string[] = []
  for (const [param, column] of Object.entries(columns)) {
    const value = values[param]
    if (typeof value !== 'string') continue
    parts.push(...(column === 'city' || column === 'state' ? [phrase(column, value)] : words(column, value)))
  }
  return parts.length > 0 ? [{ kind: 'name', type, match: parts.join(' AND ') }] : []
}

const tokenCriterion = (param: number, value: unknown): Criterion[] => {
  const token = value as Token | undefined
  if (!token) return []
  return [
    {
      kind: 'token',
      param,
      code: token.code,
      ...(token.system !== undefined ? { systems: [token.system] } : {}),
    },
  ]
}

const refCriterion = (param: number, value: unknown): Criterion[] =>
  value === undefined ? [] : [{ kind: 'ref', param, target: (value as RefValue).id }]

const idCriterion = (type: DirectoryType, value: unknown): Criterion[] =>
  typeof value === 'string' ? [{ kind: 'id', type, id: value }] : []

/** The checked parameters of one search as store criteria. */
function criteriaOf(kind: SearchKind, v: SearchValues): Criterion[] {
  switch (kind) {
    case 'Practitioner':
      return [
        ...(typeof v.identifier === 'string'
          ? [
              {
                kind: 'token',
                param: TOKEN_PARAMS.practitionerIdentifier,
                code: v.identifier,
                systems: NPI_SYSTEMS,
              } as const,
            ]
          : []),
        ...nameCriterion('Practitioner', v, {
          name: 'name',
          family: 'family',
          given: 'given',
          'address-city': 'city',
          'address-state': 'state',
        }),
      ]
    case 'PractitionerRole':
      return refCriterion(REF_PARAMS.rolePractitioner, v.practitioner)
    case 'OrganizationAffiliation':
      return [
        // One organization's affiliations are few, a network's many: the first reference drives the scan.
        ...refCriterion(REF_PARAMS.affiliationParticipating, v['participating-organization']),
        ...refCriterion(REF_PARAMS.affiliationNetwork, v.network),
        ...refCriterion(REF_PARAMS.affiliationPrimary, v['primary-organization']),
        ...idCriterion('OrganizationAffiliation', v._id),
        ...(typeof v.active === 'boolean'
          ? [{ kind: 'token', param: TOKEN_PARAMS.affiliationActive, code: String(v.active) } as const]
          : []),
      ]
    case 'Endpoint':
      return [
        ...refCriterion(REF_PARAMS.endpointOrganization, v.organization),
        ...idCriterion('Endpoint', v._id),
        ...tokenCriterion(TOKEN_PARAMS.endpointConnectionType, v['connection-type']),
        ...(typeof v.status === 'string'
          ? tokenCriterion(TOKEN_PARAMS.endpointStatus, { code: v.status })
          : []),
        ...nameCriterion('Endpoint', v, { name: 'name' }),
      ]
    case 'Organization':
      return [
        ...idCriterion('Organization', v._id),
        ...tokenCriterion(TOKEN_PARAMS.organizationIdentifier, v.identifier),
        ...tokenCriterion(TOKEN_PARAMS.organizationType, v.type),
        ...nameCriterion('Organization', v, {
          name: 'name',
          'address-city': 'city',
          'address-state': 'state',
        }),
      ]
    case 'HealthcareService':
      return [
        ...idCriterion('HealthcareService', v._id),
        ...tokenCriterion(TOKEN_PARAMS.serviceIdentifier, v.identifier),
        ...refCriterion(REF_PARAMS.serviceOrganization, v.organization),
        ...refCriterion(REF_PARAMS.serviceLocation, v.location),
        ...tokenCriterion(TOKEN_PARAMS.serviceType, v['service-type']),
        ...tokenCriterion(TOKEN_PARAMS.serviceSpecialty, v.specialty),
        ...nameCriterion('HealthcareService', v, { name: 'name' }),
      ]
  }
}

/** Organizations an affiliation or endpoint names, for the `_include` values asked. */
function includedOrganizations(resource: Resource, include: readonly string[]): string[] {
  const ids: (string | undefined)[] = []
  const refs = (value: unknown) => (Array.isArray(value) ? value : value === undefined ? [] : [value])
  for (const value of include) {
    if (value === 'OrganizationAffiliation:participating-organization')
      ids.push(referencedId(resource.participatingOrganization, 'Organization'))
    if (value === 'OrganizationAffiliation:primary-organization') {
      ids.push(referencedId(resource.organization, 'Organization'))
      ids.push(...refs(resource.network).map((ref) => referencedId(ref, 'Organization')))
    }
    if (value === 'OrganizationAffiliation:network')
      ids.push(...refs(resource.network).map((ref) => referencedId(ref, 'Organization')))
    if (value === 'Endpoint:organization')
      ids.push(referencedId(resource.managingOrganization, 'Organization'))
  }
  return ids.filter((id): id is string => id !== undefined)
}

/** The imported release as the directory's source. */
export class LocalDirectory implements DirectorySource {
  readonly #store: DirectoryStore

  constructor(db: Db) {
    this.#store = new DirectoryStore(db)
  }

  async read(type: DirectoryType, id: string): Promise<Resource | undefined> {
    return this.#store.snapshot(() => this.#store.read(type, id))
  }

  async search(
    kind: SearchKind,
    request: { values: SearchValues } | { state: unknown },
  ): Promise<SearchPage> {
    return this.#store.snapshot(() => {
      const release = this.#store.release()
      const state: LocalState =
        'state' in request ? (request.state as LocalState) : { p: request.values, a: 0, r: release }
      if (state.r !== release) {
        throw ApiError.invalid([
          {
            path: ['page'],
            message:
              '"page" belongs to a directory release that has since been replaced; start the search again',
          },
        ])
      }
      const values = state.p
      const criteria = criteriaOf(kind, values)
      const withTotal = kind !== 'Practitioner'
      if (values._summary === 'count')
        return { matches: [], includes: [], total: this.#store.count(criteria) }
      const total = withTotal ? (state.t ?? this.#store.count(criteria)) : undefined
      const count = typeof values._count === 'number' ? values._count : DEFAULT_COUNT
      const rows = this.#store.page(criteria, state.a, count + 1)
      const page = rows.slice(0, count)
      const matches = page.map((row) => row.resource)
      const last = page.at(-1)
      return {
        matches,
        includes: this.#includes(values, matches),
        ...(total !== undefined ? { total } : {}),
        ...(rows.length > count && last
          ? { next: { p: values, a: last.rid, r: release, t: total } satisfies LocalState }
          : {}),
      }
    })
  }

  #includes(values: SearchValues, matches: Resource[]): Resource[] {
    const include =
      values._include === undefined ? [] : ([] as string[]).concat(values._include as string | string[])
    if (include.length === 0) return []
    const seen = new Set(matches.map((resource) => `${String(resource.resourceType)}/${String(resource.id)}`))
    const out: Resource[] = []
    const add = (resource: Resource | undefined) => {
      if (!resource) return
      const key = `${String(resource.resourceType)}/${String(resource.id)}`
      if (seen.has(key)) return
      seen.add(key)
      out.push(resource)
    }
    for (const resource of matches) {
      if (include.includes('PractitionerRole:practitioner')) {
        for (const role of this.#store.rolesOf(String(resource.id))) add(role)
      }
      for (const id of includedOrganizations(resource, include)) add(this.#store.read('Organization', id))
    }
    return out
  }
}
