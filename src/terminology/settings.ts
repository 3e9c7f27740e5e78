import { defineSetting, jsonObject } from '../config.js'

/** Code system URI -> base URL of the remote FHIR terminology server that answers for it. */
export const TERMINOLOGY_SOURCES = defineSetting<Record<string, string>>({
  name: 'terminologySources',
  env: 'SVC_TERMINOLOGY_SOURCES',
  rule: jsonObject((z) =>
    z.record(
      z.string().min(1),
      z.url({ protocol: /^https?$/, error: 'each source must be an http(s) URL of a FHIR server base' }),
      { error: 'must be a JSON object mapping code system URIs to FHIR server base URLs' },
    ),
  ),
  fallback: {},
})
