import { ApiError } from '../http/errors.js'
import type { UpstreamSource } from '../upstream/client.js'
import { type DirectoryType, ID_PATTERN, NPI_SYSTEMS } from './model.js'
import type { RefValue, SearchKind, SearchValues } from './params.js'
import type { DirectorySource, SearchPage } from './source.js'

type Resource = Record<string, unknown>

/** What a remote cursor carries: the source's own next link, followed only on the source's origin. */
interface RemoteState {
  u: string
}

const REFERENCE_TYPES: Record<string, string> = {
  practitioner: 'Practitioner',
  network: 'Organization',
  'primary-organization': 'Organization',
  'participating-organization': 'Organization',
  organization: 'Organization',
  location: 'Location',
}

/** The checked parameters as the remote directory is asked them: references relative, NPIs in its system. */
export function forwardQuery(kind: SearchKind, values: SearchValues): URLSearchParams {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || name === '_format' || name === 'page') continue
    if (kind === 'Practitioner' && name === 'identifier')
      query.append(name, `${NPI_SYSTEMS[0]}|${String(value)}`)
    else if (REFERENCE_TYPES[name] && typeof value === 'object')
      query.append(name, `${REFERENCE_TYPES[name]}/${(value as RefValue).id}`)
    else if (Array.isArray(value)) for (const item of value) query.append(name, String(item))
    else if (typeof value === 'object') {
      const token = value as { system?: string; code: string }
      query.append(name, token.system === undefined ? token.code : `${token.system}|${token.code}`)
    } else query.append(name, String(value))
  }
  return query
}

const unreadable = (detail: string) =>
  new ApiError(502, { detail: `The directory source answered unreadably: ${detail}.` })

function isResource(value: unknown): value is Resource {
  const resource = value as Resource | null
  return (
    typeof resource === 'object' &&
    resource !== null &&
    typeof resource.resourceType === 'string' &&
    typeof resource.id === 'string' &&
    ID_PATTERN.test(resource.id)
  )
}

/** A remote FHIR directory behind the shared upstream client: its answers, never a guess in their place. */
export class RemoteDirectory implements DirectorySource {
  constructor(private readonly upstream: UpstreamSource) {}

  async read(type: DirectoryType, id: string, signal: AbortSignal): Promise<Resource | undefined> {
    const answer = await this.upstream.fetchJson({ path: `${type}/${encodeURIComponent(id)}`, signal })
    if (answer.status === 404 || answer.status === 410) return undefined
    if (!isResource(answer.body) || answer.body.resourceType !== type) throw unreadable(`not a ${type}`)
    return answer.body
  }

  async search(
    kind: SearchKind,
    request: { values: SearchValues } | { state: unknown },
    signal: AbortSignal,
  ): Promise<SearchPage> {
    const path =
      'state' in request ? (request.state as RemoteState).u : `${kind}?${forwardQuery(kind, request.values)}`
    const answer = await this.upstream.fetchJson({ path, signal })
    // A search answered "not found" is a refusal of the search, not an empty result.
    if (answer.status !== 200)
      throw new ApiError(502, { detail: `The directory source answered ${answer.status} to a search.` })
    const bundle = answer.body as {
      resourceType?: unknown
      type?: unknown
      total?: unknown
      link?: unknown
      entry?: unknown
    }
    if (bundle?.resourceType !== 'Bundle' || bundle.type !== 'searchset')
      throw unreadable('not a searchset Bundle')
    const matches: Resource[] = []
    const includes: Resource[] = []
    for (const entry of Array.isArray(bundle.entry) ? bundle.entry : []) {
      const { resource, search } = (entry ?? {}) as { resource?: unknown; search?: { mode?: unknown } }
      const mode =
        search?.mode ?? (isResource(resource) && resource.resourceType === kind ? 'match' : 'include')
      if (mode === 'outcome') continue
      if (!isResource(resource)) throw unreadable('an entry without a resource')
      if (mode === 'match') matches.push(resource)
      else includes.push(resource)
    }
    const links = Array.isArray(bundle.link) ? (bundle.link as { relation?: unknown; url?: unknown }[]) : []
    const next = links.find((link) => link.relation === 'next')?.url
    if (next !== undefined && typeof next !== 'string') throw unreadable('a next link without a url')
    return {
      matches,
      includes,
      // Practitioner searches never carry a total (spec), whatever the source says.
      ...(typeof bundle.total === 'number' && kind !== 'Practitioner' ? { total: bundle.total } : {}),
      ...(next ? { next: { u: this.upstream.resolve(next).href } satisfies RemoteState } : {}),
    }
  }
}
