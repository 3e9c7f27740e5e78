import { defineEndpoint, type Endpoint, type ResponseDoc } from '../../api/endpoint.js'
import { param, type ParamShape } from '../../api/params.js'
import { ApiError } from '../../http/errors.js'
import { SplicedJson } from '../../http/json.js'
import { FHIR_BASE } from '../../http/pathBase.js'
import { searchsetBundle } from '../bundle.js'
import type { CursorCodec } from '../cursor.js'
import type { SearchDeclaration } from './declaration.js'
import { type SearchSource, type SearchValues, searchRules } from './search.js'
import { ID_PATTERN } from '../id.js'
import { StoredJson } from './stored.js'

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

/** Where a store's endpoints answer from, and how their `page` cursors are sealed. */
export interface StoreEndpointsContext {
  tag: string
  source: SearchSource
  cursors: CursorCodec
  /** The statuses an upstream source may add (502, 503, 504), documented on each endpoint. */
  responses?: Record<number, ResponseDoc>
  /** Set when the source is remote: calls get its deadline and stop when their caller leaves. */
  waits?: 'call'
  /** What a search's description adds about its pages (a cursor of replaced data answering 410, say). */
  pagingNote?: string
}

/** A type's search endpoint: its declared parameters, rules, paging and cursors, as a searchset Bundle. */
export function searchEndpoint(
  context: StoreEndpointsContext,
  type: string,
  search: SearchDeclaration,
  summary: string,
): Endpoint {
  const params = Object.fromEntries(
    Object.entries(search.params).flatMap(([name, declared]) =>
      declared.internal ? [] : [[name, declared.spec]],
    ),
  ) as ParamShape
  return defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/${type}`,
    tag: context.tag,
    summary,
    description: `Searchset Bundle; ${
      search.count === 'whole'
        ? 'every match in one answer, with `total` (no paging).'
        : `\`_count\` 1..${search.count.max} (default ${search.count.default}); follow the \`next\` link, whose opaque \`page\` cursor expires (400 when expired or altered).`
    }${context.pagingNote ? ` ${context.pagingNote}` : ''}`,
    params,
    rules: (values, services) => searchRules(type, search, values as SearchValues, services.config.baseUrl),
    fhir: { resource: type, interaction: 'search-type' },
    waits: context.waits,
    responses: { 200: { description: 'Searchset Bundle', schema: BUNDLE_SCHEMA }, ...context.responses },
    handler: async (request, services) => {
      const { cursors } = context
      const {
        page: cursor,
        _format: _,
        ...values
      } = request.params as SearchValues & { page?: string; _format?: string }
      const result = await context.source.search(
        type,
        cursor === undefined ? { values } : { state: cursors.open(type, cursor) },
        request.signal,
        { takesGzip: request.takesGzip },
      )
      const base = `${services.config.baseUrl}${FHIR_BASE}/${type}`
      const query = request.query.toString()
      return {
        body: searchsetBundle({
          baseUrl: services.config.baseUrl,
          self: query ? `${base}?${query}` : base,
          next: result.next === undefined ? undefined : `${base}?page=${cursors.seal(type, result.next)}`,
          total: result.total,
          matches: result.matches,
          marks: result.marks,
          includes: result.includes,
        }),
      }
    },
  })
}

/** A type's read endpoint: the resource as its source holds it, or 404. */
export function readEndpoint(
  context: Pick<StoreEndpointsContext, 'tag' | 'source' | 'responses' | 'waits'>,
  type: string,
  summary: string,
): Endpoint {
  return defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/${type}/:id`,
    tag: context.tag,
    summary,
    params: {},
    pathParams: { id: param.string(`${type} id`, { max: 64, pattern: ID_PATTERN }) },
    fhir: { resource: type, interaction: 'read' },
    waits: context.waits,
    responses: { 200: { description: type, schema: { type: 'object' } }, ...context.responses },
    handler: async (request) => {
      const id = request.pathParams.id as string
      const resource = await context.source.read(type, id, request.signal, {
        takesGzip: request.takesGzip,
      })
      if (!resource) throw new ApiError(404, { detail: `No ${type}/${id} is held here.` })
      return { body: resource instanceof StoredJson ? new SplicedJson([resource.spliceable()]) : resource }
    },
  })
}
