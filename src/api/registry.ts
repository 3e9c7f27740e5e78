import { directoryEndpoints } from '../directory/endpoints.js'
import { docsEndpoints } from '../docs/endpoints.js'
import { fhirBaseEndpoints } from '../fhir/endpoints.js'
import { FHIR_BASE } from '../http/errors.js'
import { schedulingEndpoints } from '../scheduling/endpoints.js'
import { terminologyEndpoints } from '../terminology/endpoints.js'
import type { Endpoint } from './endpoint.js'
import { param } from './params.js'

const FORMAT_PARAM = param.string(
  'Response format: json or a JSON media type; overrides Accept (FHIR base only).',
)

/** `_format` is a parameter of every path on the FHIR base and of no other. */
function withFormat(endpoint: Endpoint): Endpoint {
  if (!endpoint.path.startsWith(FHIR_BASE)) return endpoint
  return { ...endpoint, params: { ...endpoint.params, _format: FORMAT_PARAM } }
}

/** Every endpoint the appliance serves, one declaration each. */
export function allEndpoints(): Endpoint[] {
  return [
    ...docsEndpoints,
    ...fhirBaseEndpoints,
    ...schedulingEndpoints,
    ...terminologyEndpoints,
    ...directoryEndpoints,
  ].map(withFormat)
}
