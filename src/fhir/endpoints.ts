import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { FHIR_BASE } from '../http/errors.js'
import { buildCapabilityStatement } from './capabilityStatement.js'

export const fhirBaseEndpoints: Endpoint[] = [
  defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/metadata`,
    tag: 'fhir',
    summary: 'CapabilityStatement of the FHIR base',
    params: {},
    fhir: { interaction: 'capabilities' },
    responses: { 200: { description: 'CapabilityStatement', schema: { type: 'object' } } },
    handler: (_request, { routes, config }) => {
      const body = routes.document('capability-statement', (endpoints) => buildCapabilityStatement(endpoints, config.baseUrl))
      return { body, etag: true, headers: { 'Cache-Control': 'private, max-age=300' } }
    },
  }),
]
