import type { AppContext } from '../api/domain.js'
import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { param } from '../api/params.js'
import { searchsetBundle } from '../fhir/bundle.js'
import { CursorCodec } from '../fhir/cursor.js'
import { ApiError, FHIR_BASE } from '../http/errors.js'
import { UpstreamSource } from '../upstream/client.js'
import { LocalDirectory } from './local.js'
import { DIRECTORY_TYPES, type DirectoryType, ID_PATTERN } from './model.js'
import { SEARCH_PARAMS, type SearchKind, type SearchValues, searchRules } from './params.js'
import { RemoteDirectory } from './remote.js'
import type { DirectorySource } from './source.js'

/** One app's directory: where answers come from, and the codec of its `page` cursors. */
export interface Directory {
  source: DirectorySource
  cursors: CursorCodec
}

/** The configured source: the remote directory when `directoryUrl` is set, else the imported release. */
export function createDirectory({ db, config, clock, upstream }: AppContext): Directory {
  const source = config.directoryUrl
    ? new RemoteDirectory(
        new UpstreamSource({
          ...upstream,
          baseUrl: config.directoryUrl,
          name: 'The directory source',
          timeoutMs: config.directoryTimeoutMs,
          headers: config.directoryApiKey ? { authorization: `Bearer ${config.directoryApiKey}` } : undefined,
        }),
      )
    : new LocalDirectory(db)
  return { source, cursors: new CursorCodec(db, clock) }
}

const BUNDLE_SCHEMA = {
  type: 'object',
  required: ['resourceType', 'type', 'link'],
  properties: {
    resourceType: { const: 'Bundle' },
    type: { const: 'searchset' },
    total: { type: 'integer', minimum: 0 },
    link: {
      type: 'array',
      items: {
        type: 'object',
        required: ['relation', 'url'],
        properties: { relation: { enum: ['self', 'next'] }, url: { type: 'string' } },
      },
    },
    entry: {
      type: 'array',
      items: {
        type: 'object',
        required: ['fullUrl', 'resource', 'search'],
        properties: {
          fullUrl: { type: 'string', format: 'uri' },
          resource: { type: 'object' },
          search: { type: 'object', properties: { mode: { enum: ['match', 'include'] } } },
        },
      },
    },
  },
}

const SEARCH_SUMMARIES: Record<SearchKind, string> = {
  Practitioner: 'Find practitioners by NPI or by name (no total, ever)',
  PractitionerRole: "A practitioner's roles",
  OrganizationAffiliation:
    'Network membership: affiliations by network, primary or participating organization',
  Endpoint: "An organization's technical endpoints",
  Organization: 'Providers, payers and insurance networks',
  HealthcareService: 'Healthcare services by organization, location, type or specialty',
}

const UPSTREAM_ERRORS = {
  502: { description: 'The remote directory refused, failed or answered unreadably' },
  503: { description: 'The remote directory is rate limiting (code throttled, Retry-After)' },
  504: { description: 'The remote directory did not answer in time' },
}

function searchEndpoint(directory: Directory, kind: SearchKind): Endpoint {
  return defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/${kind}`,
    tag: 'directory',
    summary: SEARCH_SUMMARIES[kind],
    description:
      'Searchset Bundle; `_count` 1..100; follow the `next` link, whose opaque `page` cursor expires (400 when expired or altered).',
    params: SEARCH_PARAMS[kind],
    rules: (values, services) => searchRules(kind, values as SearchValues, services.config.baseUrl),
    fhir: { resource: kind, interaction: 'search-type' },
    responses: { 200: { description: 'Searchset Bundle', schema: BUNDLE_SCHEMA }, ...UPSTREAM_ERRORS },
    handler: async (request, services) => {
      const codec = directory.cursors
      const {
        page: cursor,
        _format: _,
        ...values
      } = request.params as SearchValues & { page?: string; _format?: string }
      const result = await directory.source.search(
        kind,
        cursor === undefined ? { values } : { state: codec.open(kind, cursor) },
        request.signal,
      )
      const base = `${services.config.baseUrl}${FHIR_BASE}/${kind}`
      const query = request.query.toString()
      return {
        body: searchsetBundle({
          baseUrl: services.config.baseUrl,
          self: query ? `${base}?${query}` : base,
          next: result.next === undefined ? undefined : `${base}?page=${codec.seal(kind, result.next)}`,
          total: result.total,
          matches: result.matches,
          includes: result.includes,
        }),
      }
    },
  })
}

function readEndpoint(directory: Directory, type: DirectoryType): Endpoint {
  return defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/${type}/:id`,
    tag: 'directory',
    summary: `Read a ${type} as the directory publishes it`,
    params: {},
    pathParams: { id: param.string(`${type} id`, { max: 64, pattern: ID_PATTERN }) },
    fhir: { resource: type, interaction: 'read' },
    responses: { 200: { description: type, schema: { type: 'object' } }, ...UPSTREAM_ERRORS },
    handler: async (request) => {
      const id = request.pathParams.id as string
      const resource = await directory.source.read(type, id, request.signal)
      if (!resource) throw new ApiError(404, { detail: `The directory holds no ${type}/${id}.` })
      return { body: resource }
    },
  })
}

/** Location is read only (spec): it has no search endpoint. */
export const directoryEndpoints = (directory: Directory): Endpoint[] => [
  ...(Object.keys(SEARCH_PARAMS) as SearchKind[]).map((kind) => searchEndpoint(directory, kind)),
  ...DIRECTORY_TYPES.map((type) => readEndpoint(directory, type)),
]
