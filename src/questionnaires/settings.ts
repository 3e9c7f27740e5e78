import { defineSetting, milliseconds, type SettingRule } from '../config.js'

const ADDRESS = /^(fhir\+)?https?:\/\/[^\s,]+$/i

/** The URL of a configured address, its `fhir+` mark (a FHIR server base) taken off. */
export const addressUrl = (entry: string) => entry.replace(/^fhir\+/i, '')

/**
 * Addresses the service may reach for Questionnaires: `fhir+https://host/base` is a FHIR server searched as
 * `https://host/base/Questionnaire?url=…`; `https://host/path/` is a prefix under which a canonical URL
 * answers the resource itself. Comma-separated in the environment, a list in the config file.
 */
export const QUESTIONNAIRE_SOURCES = defineSetting<string[]>({
  name: 'questionnaireSources',
  env: 'SVC_QUESTIONNAIRE_SOURCES',
  rule: (z) =>
    z.preprocess(
      (raw) =>
        typeof raw === 'string'
          ? raw
              .split(',')
              .map((entry) => entry.trim())
              .filter(Boolean)
          : raw,
      z.array(
        z
          .string()
          .regex(ADDRESS, 'must list http(s) addresses or fhir+http(s) FHIR bases, comma-separated')
          .refine((entry) => URL.canParse(addressUrl(entry)), 'must list valid URLs'),
      ),
    ) as unknown as ReturnType<SettingRule<string[]>>,
  fallback: [],
})

/** How long one request to a questionnaire source may take (per attempt). */
export const QUESTIONNAIRE_TIMEOUT_MS = defineSetting({
  name: 'questionnaireTimeoutMs',
  env: 'SVC_QUESTIONNAIRE_TIMEOUT_MS',
  rule: milliseconds(100, 120_000),
  fallback: 10_000,
})
