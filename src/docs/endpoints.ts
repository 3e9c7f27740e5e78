import type { Endpoint } from '../api/endpoint.js'
import { defineEndpoint } from '../api/endpoint.js'
import { buildOpenApi } from '../api/openapi.js'
import { errorsPageHtml } from './errorsPage.js'
import { changelogPageHtml, DOCS_HEADERS, landingPageHtml, referencePageHtml } from './pages.js'

const html = { description: 'HTML page', contentType: 'text/html', schema: { type: 'string' } } as const

/** An open HTML page. */
function htmlPage(path: string, summary: string, body: () => string): Endpoint {
  return defineEndpoint({
    method: 'GET',
    path,
    tag: 'meta',
    summary,
    params: {},
    responses: { 200: html },
    handler: () => ({ body: body(), contentType: 'text/html; charset=utf-8', headers: DOCS_HEADERS }),
  })
}

export const docsEndpoints: Endpoint[] = [
  htmlPage(
    '/',
    'What this server is, with links to the reference, the dashboard and the OpenAPI description',
    landingPageHtml,
  ),
  htmlPage(
    '/docs',
    'API reference (Swagger UI over /openapi.json, served from this server)',
    referencePageHtml,
  ),
  htmlPage('/docs/changelog', 'Changes visible to callers, newest first', changelogPageHtml),
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
