import { FHIR_BASE } from '../http/errors.js'

type Resource = Record<string, unknown>

export interface SearchsetInput {
  /** Public base URL of the service, without the FHIR base path. */
  baseUrl: string
  self: string
  next?: string
  total?: number
  matches: readonly Resource[]
  /** Entries added by `_include`: they do not count toward `_count`. */
  includes?: readonly Resource[]
}

/** The absolute address of a resource under this service's FHIR base. */
export const fullUrlOf = (baseUrl: string, resource: Resource) =>
  `${baseUrl}${FHIR_BASE}/${String(resource.resourceType)}/${String(resource.id)}`

/** A FHIR searchset Bundle as the spec shapes it: self/next links, match then include entries. */
export function searchsetBundle(input: SearchsetInput): Resource {
  const entry = (mode: 'match' | 'include') => (resource: Resource) => ({
    fullUrl: fullUrlOf(input.baseUrl, resource),
    resource,
    search: { mode },
  })
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    ...(input.total !== undefined ? { total: input.total } : {}),
    link: [
      { relation: 'self', url: input.self },
      ...(input.next !== undefined ? [{ relation: 'next', url: input.next }] : []),
    ],
    entry: [...input.matches.map(entry('match')), ...(input.includes ?? []).map(entry('include'))],
  }
}
