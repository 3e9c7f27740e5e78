import type { Terminology } from './terminology.js'
import { FHIR_BASE } from '../http/errors.js'
import { API_VERSION, RELEASE_DATE } from '../version.js'
import { MAX_WHOLE_EXPANSION } from './expand.js'
import { RECOGNISED_SYSTEMS } from './recognised.js'
import { listCodeSystems } from './store.js'

/** Names, on TerminologyCapabilities, a code system the service knows of but cannot answer for here. */
export const NOT_SERVED_EXTENSION = 'urn:svc:fhir:StructureDefinition:code-system-not-served'

/**
 * TerminologyCapabilities: every code system served, with the releases held (the default one marked) or
 * its remote source, and the recognised systems this deployment has no source for.
 */
export function buildTerminologyCapabilities(terminology: Terminology): Record<string, unknown> {
  const held = listCodeSystems(terminology.db)
  const heldUrls = new Set(held.map((system) => system.url))
  const remote = [...terminology.sources.keys()].filter((url) => !heldUrls.has(url)).sort()
  const unserved = [...RECOGNISED_SYSTEMS].filter(
    ([url]) => !heldUrls.has(url) && !terminology.sources.has(url),
  )
  return {
    resourceType: 'TerminologyCapabilities',
    status: 'active',
    date: RELEASE_DATE,
    publisher: 'svc',
    kind: 'instance',
    software: { name: 'svc', version: API_VERSION },
    implementation: { description: 'svc FHIR R4 terminology', url: `${terminology.baseUrl}${FHIR_BASE}` },
    description:
      'Code systems held at a named release (CodeSystem.version) or answered by their own source. ' +
      `Recognised but not served here: ${unserved.map(([, name]) => name).join(', ') || 'none'}.`,
    extension: unserved.map(([url, name]) => ({
      url: NOT_SERVED_EXTENSION,
      extension: [
        { url: 'system', valueUri: url },
        { url: 'name', valueString: name },
      ],
    })),
    codeSystem: [
      ...held.map((system) => ({
        uri: system.url,
        version: system.versions.map((code) => ({
          code,
          ...(code === system.defaultVersion ? { isDefault: true } : {}),
        })),
        subsumption: true,
      })),
      ...remote.map((url) => ({ uri: url })),
    ],
    expansion: {
      hierarchical: false,
      paging: true,
      incomplete: false,
      textFilter: `Every word must start a word of the display, or start the code. Without count, at most ${MAX_WHOLE_EXPANSION} codes.`,
    },
    codeSearch: 'all',
    validateCode: { translations: false },
  }
}
