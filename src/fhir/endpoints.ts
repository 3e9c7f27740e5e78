import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import { param } from '../api/params.js'
import { FHIR_BASE } from '../http/errors.js'
import { BATCH_MAX_BYTES, runBatch } from './batch.js'
import { buildCapabilityStatement } from './capabilityStatement.js'

/** Other forms of `GET metadata`, by `mode` value: each builds its resource from the store per request. */
export type MetadataModes = Record<string, () => Record<string, unknown>>

const FORMAT_PARAM = param.string(
  'Response format: json or a JSON media type; overrides Accept (FHIR base only).',
)

/** `_format` is a parameter of every path on the FHIR base and of no other. */
export function withFormat(endpoint: Endpoint): Endpoint {
  if (!endpoint.path.startsWith(FHIR_BASE) || endpoint.patientData) return endpoint
  return { ...endpoint, params: { ...endpoint.params, _format: FORMAT_PARAM } }
}

/** The FHIR base's own endpoints: its CapabilityStatement (and the domains' other metadata modes), and batch. */
export function fhirBaseEndpoints(modes: MetadataModes): Endpoint[] {
  const names = Object.keys(modes)
  return [
    defineEndpoint({
      method: 'GET',
      path: `${FHIR_BASE}/metadata`,
      tag: 'fhir',
      summary: 'CapabilityStatement of the FHIR base',
      params:
        names.length === 0
          ? {}
          : {
              mode: param.enumeration(
                names as [string, ...string[]],
                `${names.join(', ')}: another resource in place of the CapabilityStatement (terminology: TerminologyCapabilities)`,
              ),
            },
      fhir: { interaction: 'capabilities' },
      responses: {
        200: { description: 'CapabilityStatement, or TerminologyCapabilities', schema: { type: 'object' } },
      },
      handler: (request, services) => {
        // A mode's answer reads the store, so it is built per request; its ETag still gives 304s.
        const mode = (request.params as { mode?: string }).mode
        const body =
          mode !== undefined
            ? (modes[mode] as () => Record<string, unknown>)()
            : services.routes.document('capability-statement', (endpoints) =>
                buildCapabilityStatement(endpoints, services.config.baseUrl),
              )
        return { body, etag: true, headers: { 'Cache-Control': 'private, max-age=300' } }
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: FHIR_BASE,
      tag: 'batch',
      summary: 'Batch: several reads, searches and operations of the base in one round trip',
      description:
        'Entries answer as the same requests alone would, independently; entries that wait on a remote source run ' +
        'side by side. At most 100 entries and 1 MiB; transaction bundles and $reconcile-medications are refused; ' +
        'entries still running after 60 s answer 504.',
      params: {},
      body: { maxBytes: BATCH_MAX_BYTES, description: 'A Bundle of type batch.' },
      fhir: { interaction: 'batch' },
      notInBatch: 'A batch cannot contain another batch',
      waits: 'batch',
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
}
