import { ApiError } from '../../http/errors.js'
import type { UpstreamSource } from '../../upstream/client.js'
import type { ResourceTypeDeclaration, SearchDeclaration } from './declaration.js'
import { remoteQuery, type SearchPage, type SearchSource, type SearchValues } from './search.js'
import { ID_PATTERN } from '../id.js'

type Resource = Record<string, unknown>

/** What a remote cursor carries: the source's next link as a path under its base, never its address. */
interface RemoteState {
  p: string
}

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

/**
 * A remote FHIR server as a store's source, behind the shared upstream client: parameters checked here are
 * asked in their declared remote form, and its answers come back as they are, never a guess in their place.
 */
export class RemoteSearch implements SearchSource {
  readonly #searches: Map<string, SearchDeclaration>

  constructor(
    private readonly upstream: UpstreamSource,
    types: readonly ResourceTypeDeclaration[],
  ) {
    this.#searches = new Map(types.flatMap((type) => (type.search ? [[type.type, type.search]] : [])))
  }

  #unreadable(detail: string): ApiError {
    return new ApiError(502, { detail: `${this.upstream.name} answered unreadably: ${detail}.` })
  }

  async read(type: string, id: string, signal: AbortSignal): Promise<Resource | undefined> {
    const answer = await this.upstream.fetchJson({ path: `${type}/${encodeURIComponent(id)}`, signal })
    if (answer.status === 404 || answer.status === 410) return undefined
    if (!isResource(answer.body) || answer.body.resourceType !== type) throw this.#unreadable(`not a ${type}`)
    return answer.body
  }

  async search(
    kind: string,
    request: { values: SearchValues } | { state: unknown },
    signal: AbortSignal,
  ): Promise<SearchPage> {
    const search = this.#searches.get(kind)
    if (!search) throw new Error(`${kind} has no search`)
    const path =
      'state' in request ? (request.state as RemoteState).p : `${kind}?${remoteQuery(search, request.values)}`
    const answer = await this.upstream.fetchJson({ path, signal })
    // A search answered "not found" is a refusal of the search, not an empty result.
    if (answer.status !== 200)
      throw new ApiError(502, { detail: `${this.upstream.name} answered ${answer.status} to a search.` })
    const bundle = answer.body as {
      resourceType?: unknown
      type?: unknown
      total?: unknown
      link?: unknown
      entry?: unknown
    }
    if (bundle?.resourceType !== 'Bundle' || bundle.type !== 'searchset')
      throw this.#unreadable('not a searchset Bundle')
    const matches: Resource[] = []
    const includes: Resource[] = []
    for (const entry of Array.isArray(bundle.entry) ? bundle.entry : []) {
      const { resource, search } = (entry ?? {}) as { resource?: unknown; search?: { mode?: unknown } }
      const mode =
        search?.mode ?? (isResource(resource) && resource.resourceType === kind ? 'match' : 'include')
      if (mode === 'outcome') continue
      if (!isResource(resource)) throw this.#unreadable('an entry without a resource')
      if (mode === 'match') matches.push(resource)
      else includes.push(resource)
    }
    const links = Array.isArray(bundle.link) ? (bundle.link as { relation?: unknown; url?: unknown }[]) : []
    const next = links.find((link) => link.relation === 'next')?.url
    if (next !== undefined && typeof next !== 'string') throw this.#unreadable('a next link without a url')
    return {
      matches,
      includes,
      // A search declared without a total (Practitioner's, by the spec) never carries one, whatever the source says.
      ...(typeof bundle.total === 'number' && search.total ? { total: bundle.total } : {}),
      ...(next
        ? { next: { p: this.upstream.relative(this.upstream.resolve(next)) } satisfies RemoteState }
        : {}),
    }
  }
}
