import { z } from 'zod'
import { FHIR_BASE, STATUS_TYPES } from '../http/errors.js'
import { requiresKey } from '../http/middleware/authenticate.js'
import { API_VERSION } from '../version.js'
import type { Endpoint, ResponseDoc } from './endpoint.js'
import { isRequired, type ParamSpec } from './params.js'

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'instance'],
  properties: {
    type: { type: 'string', format: 'uri', description: '{docs_url}/errors#<slug>; clients branch on it' },
    title: { type: 'string', description: 'Identical for every problem of one type' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'Human text for this occurrence; not to be parsed' },
    instance: { type: 'string', description: 'urn:uuid:<request id>, the same id as X-Request-Id' },
    issues: {
      type: 'array',
      description: 'Only on 400: one item per parameter at fault',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'array', items: { type: 'string' } }, message: { type: 'string' } },
      },
    },
  },
}

const OPERATION_OUTCOME_SCHEMA = {
  type: 'object',
  required: ['resourceType', 'issue'],
  properties: {
    resourceType: { const: 'OperationOutcome' },
    issue: {
      type: 'array',
      items: {
        type: 'object',
        required: ['severity', 'code'],
        properties: {
          severity: { type: 'string', enum: ['fatal', 'error', 'warning', 'information'] },
          code: { type: 'string', description: 'FHIR issue type' },
          details: { type: 'object', properties: { text: { type: 'string' } } },
          diagnostics: { type: 'string' },
          expression: { type: 'array', items: { type: 'string' }, description: 'The parameters at fault' },
        },
      },
    },
  },
}

/** Statuses every endpoint may answer besides its own (spec, Endpoints preamble and Errors). */
const SHARED_STATUSES = [400, 404, 405, 406, 500] as const
const KEYED_STATUSES = [401, 429, 503] as const

function paramSchema(declared: ParamSpec): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(declared.schema, {
    io: 'output',
    unrepresentable: 'any',
  }) as Record<string, unknown>
  return schema
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

function errorResponse(status: keyof typeof STATUS_TYPES, fhir: boolean): Record<string, unknown> {
  const media = fhir ? 'application/fhir+json' : 'application/problem+json'
  const schema = { $ref: fhir ? '#/components/schemas/OperationOutcome' : '#/components/schemas/Problem' }
  const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }
  if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' }
  if (status === 405)
    headers.Allow = { schema: { type: 'string' }, description: 'Methods allowed on the path' }
  return { description: STATUS_TYPES[status].title, headers, content: { [media]: { schema } } }
}

function successResponse(doc: ResponseDoc, fhir: boolean): Record<string, unknown> {
  const media = doc.contentType ?? (fhir ? 'application/fhir+json' : 'application/json')
  return {
    description: doc.description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    ...(doc.schema ? { content: { [media]: { schema: doc.schema } } } : {}),
  }
}

function operation(endpoint: Endpoint): Record<string, unknown> {
  const fhir = endpoint.path.startsWith(FHIR_BASE)
  const keyed = requiresKey(endpoint.path)
  const parameters = [
    ...Object.entries(endpoint.pathParams ?? {}).map(([name, declared]) => ({
      name,
      in: 'path',
      required: true,
      description: declared.description,
      schema: paramSchema(declared),
    })),
    ...Object.entries(endpoint.params).map(([name, declared]) => ({
      name,
      in: 'query',
      required: isRequired(declared),
      description: declared.description,
      schema: paramSchema(declared),
      ...(declared.repeatable ? { style: 'form', explode: true } : {}),
    })),
  ]
  const responses: Record<string, unknown> = {}
  for (const [status, doc] of Object.entries(endpoint.responses))
    responses[status] = successResponse(doc, fhir)
  for (const status of [...SHARED_STATUSES, ...(keyed ? KEYED_STATUSES : [])]) {
    responses[String(status)] ??= errorResponse(status, fhir)
  }
  if (endpoint.body) {
    responses['413'] ??= errorResponse(413, fhir)
    responses['415'] ??= errorResponse(415, fhir)
  }
  return {
    operationId: `${endpoint.method.toLowerCase()}${endpoint.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: endpoint.summary,
    ...(endpoint.description ? { description: endpoint.description } : {}),
    tags: [endpoint.tag],
    parameters,
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            description: `${endpoint.body.description} At most ${endpoint.body.maxBytes} bytes.`,
            content: {
              'application/fhir+json': { schema: { type: 'object' } },
              'application/json': { schema: { type: 'object' } },
            },
          },
        }
      : {}),
    responses,
    security: keyed ? [{ bearer: [] }, { apiKey: [] }] : [],
  }
}

/** The OpenAPI 3.1 description of every served path, generated from the endpoint declarations. */
export function buildOpenApi(endpoints: readonly Endpoint[], baseUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const endpoint of endpoints) {
    const path = openApiPath(endpoint.path)
    paths[path] ??= {}
    ;(paths[path] as Record<string, unknown>)[endpoint.method.toLowerCase()] = operation(endpoint)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc healthcare data API',
      version: API_VERSION,
      description:
        'Scheduling availability search and a FHIR R4 base (capabilities, batch, terminology, provider directory, ' +
        'questionnaires, plan benefits, medication reconciliation). ' +
        'Every path under /v1 needs an API key. Undeclared query parameters are refused by name.',
    },
    servers: [{ url: baseUrl }],
    tags: [...new Set(endpoints.map((endpoint) => endpoint.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_sk_…' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
      headers: {
        'X-Request-Id': {
          description: "The service's id for this request (UUID)",
          schema: { type: 'string', format: 'uuid' },
        },
        'Retry-After': {
          description: 'Seconds to wait before retrying',
          schema: { type: 'integer', minimum: 0 },
        },
      },
      schemas: { Problem: PROBLEM_SCHEMA, OperationOutcome: OPERATION_OUTCOME_SCHEMA },
    },
  }
}
