import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { FHIR_BASE } from '../http/errors.js'
import { BATCH_MAX_BYTES, runBatch } from './batch.js'
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
      const body = routes.document('capability-statement', (endpoints) =>
        buildCapabilityStatement(endpoints, config.baseUrl),
      )
      return { body, etag: true, headers: { 'Cache-Control': 'private, max-age=300' } }
    },
  }),
  defineEndpoint({
    method: 'POST',
    path: FHIR_BASE,
    tag: 'fhir',
    summary: 'Batch: several reads, searches and operations of the base in one round trip',
    description:
      'Entries run in order, independently, each answering as the same request alone would. At most 100 entries ' +
      'and 1 MiB; transaction bundles and $reconcile-medications are refused; entries still running after 60 s answer 504.',
    params: {},
    body: { maxBytes: BATCH_MAX_BYTES, description: 'A Bundle of type batch.' },
    fhir: { interaction: 'batch' },
    responses: {
      200: { description: 'Bundle of type batch-response, one entry per request entry, in order' },
    },
    handler: async (request, services) => ({
      body: await runBatch(request.body, services, { owner: request.owner, requestId: request.requestId }),
    }),
  }),
]
