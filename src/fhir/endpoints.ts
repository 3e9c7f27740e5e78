import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { param } from '../api/params.js'
import { FHIR_BASE } from '../http/errors.js'
import { buildTerminologyCapabilities } from '../terminology/capabilities.js'
import { BATCH_MAX_BYTES, runBatch } from './batch.js'
import { buildCapabilityStatement } from './capabilityStatement.js'

export const fhirBaseEndpoints: Endpoint[] = [
  defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/metadata`,
    tag: 'fhir',
    summary: 'CapabilityStatement of the FHIR base',
    params: {
      mode: param.enumeration(
        ['terminology'],
        'terminology: a TerminologyCapabilities resource instead of the CapabilityStatement',
      ),
    },
    fhir: { interaction: 'capabilities' },
    responses: {
      200: { description: 'CapabilityStatement, or TerminologyCapabilities', schema: { type: 'object' } },
    },
    handler: (request, services) => {
      // The terminology answer reads the store, so it is built per request; its ETag still gives 304s.
      const body =
        request.params.mode === 'terminology'
          ? buildTerminologyCapabilities(services)
          : services.routes.document('capability-statement', (endpoints) =>
              buildCapabilityStatement(endpoints, services.config.baseUrl),
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
    notInBatch: 'A batch cannot contain another batch',
    responses: {
      200: { description: 'Bundle of type batch-response, one entry per request entry, in order' },
    },
    handler: async (request, services) => ({
      body: await runBatch(
        request.body,
        services,
        { owner: request.owner, requestId: request.requestId, signal: request.signal },
        services.batchBudgetMs,
      ),
    }),
  }),
]
