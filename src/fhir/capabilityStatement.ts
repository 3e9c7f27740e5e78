import type { Endpoint } from '../api/endpoint.js'
import { FHIR_BASE } from '../http/errors.js'
import { API_VERSION, RELEASE_DATE } from '../version.js'

interface ResourceEntry {
  type: string
  interaction: { code: string }[]
  searchParam: { name: string; type: string; documentation: string }[]
  operation: { name: string; definition: string }[]
}

/** The CapabilityStatement of the FHIR base, generated from the endpoint declarations served on it. */
export function buildCapabilityStatement(
  endpoints: readonly Endpoint[],
  baseUrl: string,
): Record<string, unknown> {
  const resources = new Map<string, ResourceEntry>()
  const systemInteractions: { code: string }[] = []
  const systemOperations: { name: string; definition: string }[] = []
  const instantiates = new Set<string>()
  for (const endpoint of endpoints) {
    const fhir = endpoint.fhir
    if (!fhir || !endpoint.path.startsWith(FHIR_BASE)) continue
    if (fhir.instantiates) instantiates.add(fhir.instantiates)
    if (!fhir.resource) {
      if (fhir.interaction === 'batch') systemInteractions.push({ code: 'batch' })
      if (fhir.operation) systemOperations.push(fhir.operation)
      continue
    }
    let entry = resources.get(fhir.resource)
    if (!entry) {
      entry = { type: fhir.resource, interaction: [], searchParam: [], operation: [] }
      resources.set(fhir.resource, entry)
    }
    // An operation served by GET and POST is declared twice; it is one operation.
    const operation = fhir.operation
    if (operation && !entry.operation.some((known) => known.name === operation.name)) {
      entry.operation.push(operation)
    }
    if (fhir.interaction === 'read') entry.interaction.push({ code: 'read' })
    if (fhir.interaction === 'search-type') {
      entry.interaction.push({ code: 'search-type' })
      for (const [name, declared] of Object.entries(endpoint.params)) {
        if (name === '_format') continue
        // A modifier (`name:contains`) is a form of its parameter, not a parameter of its own.
        const [base, modifier] = name.split(':')
        const known = entry.searchParam.find((searchParam) => searchParam.name === base)
        if (modifier !== undefined && known) {
          known.documentation += ` :${modifier}: ${declared.description}`
          continue
        }
        entry.searchParam.push({
          name,
          type: declared.fhirType,
          documentation: declared.description,
        })
      }
    }
  }
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: RELEASE_DATE,
    publisher: 'svc',
    kind: 'instance',
    ...(instantiates.size > 0 ? { instantiates: [...instantiates] } : {}),
    software: { name: 'svc', version: API_VERSION },
    implementation: { description: 'svc FHIR R4 base', url: `${baseUrl}${FHIR_BASE}` },
    fhirVersion: '4.0.1',
    format: ['json', 'application/fhir+json'],
    rest: [
      {
        mode: 'server',
        security: {
          description: 'Send an API key as "Authorization: Bearer <key>" or in the x-api-key header.',
        },
        resource: [...resources.values()].map((entry) => ({
          type: entry.type,
          interaction: entry.interaction,
          ...(entry.searchParam.length > 0 ? { searchParam: entry.searchParam } : {}),
          ...(entry.operation.length > 0 ? { operation: entry.operation } : {}),
        })),
        interaction: systemInteractions,
        ...(systemOperations.length > 0 ? { operation: systemOperations } : {}),
      },
    ],
  }
}
