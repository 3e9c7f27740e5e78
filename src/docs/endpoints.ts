import type { Endpoint } from '../api/endpoint.js'
import { defineEndpoint } from '../api/endpoint.js'
import { buildOpenApi } from '../api/openapi.js'
import { errorsPageHtml } from './errorsPage.js'

export const docsEndpoints: Endpoint[] = [
  defineEndpoint({
    method: 'GET',
    path: '/openapi.json',
    tag: 'meta',
    summary: 'OpenAPI 3.1 description of every served path',
    params: {},
    responses: { 200: { description: 'The OpenAPI document', schema: { type: 'object' } } },
    handler: (_request, { routes, config }) => {
      const body = routes.document('openapi', (endpoints) => buildOpenApi(endpoints, config.baseUrl))
      return { body, etag: true, headers: { 'Cache-Control': 'public, max-age=300' } }
    },
  }),
  defineEndpoint({
    method: 'GET',
    path: '/docs/errors',
    tag: 'meta',
    summary: 'Human documentation of every problem type, one anchor per slug',
    params: {},
    responses: { 200: { description: 'HTML page', contentType: 'text/html', schema: { type: 'string' } } },
    handler: () => ({
      body: errorsPageHtml(),
      contentType: 'text/html; charset=utf-8',
      headers: { 'Cache-Control': 'public, max-age=3600' },
    }),
  }),
]
