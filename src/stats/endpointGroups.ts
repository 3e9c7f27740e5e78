import { FHIR_BASE } from '../http/errors.js'

/** FHIR resource types by the domain that serves them; a type not listed falls in the `fhir` group. */
const RESOURCE_GROUPS: Record<string, string> = {
  CodeSystem: 'terminology',
  ValueSet: 'terminology',
  ConceptMap: 'terminology',
  TerminologyCapabilities: 'terminology',
  Practitioner: 'directory',
  PractitionerRole: 'directory',
  Organization: 'directory',
  OrganizationAffiliation: 'directory',
  Location: 'directory',
  Endpoint: 'directory',
  HealthcareService: 'directory',
  InsurancePlan: 'plans',
  Questionnaire: 'questionnaires',
}

/**
 * The domain an endpoint belongs to, from its declared route (`request_log.route`). Derived from the path
 * rather than the registry so records written by other versions of the server still group. A request no
 * route matched (404, 405 on an unknown path) is `unmatched`.
 */
export function endpointGroup(route: string | null): string {
  if (route === null) return 'unmatched'
  if (route === FHIR_BASE) return 'batch'
  if (route.startsWith(`${FHIR_BASE}/`)) {
    const first = route.slice(FHIR_BASE.length + 1).split('/')[0] ?? ''
    return RESOURCE_GROUPS[first] ?? 'fhir'
  }
  const domain = /^\/v1\/([^/]+)/.exec(route)?.[1]
  return domain ?? 'meta'
}
