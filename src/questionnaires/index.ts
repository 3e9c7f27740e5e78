import type { DomainModule } from '../api/domain.js'
import { questionnaireDataSets } from './dataSets.js'
import { settingOf } from '../config.js'
import { checkCredentialsTransport } from '../upstream/settings.js'
import { QUESTIONNAIRE_STEPS } from './schema.js'
import { addressUrl, QUESTIONNAIRE_SOURCES, QUESTIONNAIRE_TIMEOUT_MS } from './settings.js'

/** Questionnaires as published: the curated set, imports, and forms fetched from configured addresses. */
export const questionnaires: DomainModule = {
  name: 'questionnaires',
  steps: QUESTIONNAIRE_STEPS,
  settings: [QUESTIONNAIRE_SOURCES, QUESTIONNAIRE_TIMEOUT_MS],
  checkConfig: (config) => {
    for (const address of settingOf(config, QUESTIONNAIRE_SOURCES) ?? [])
      checkCredentialsTransport(addressUrl(address), QUESTIONNAIRE_SOURCES.env, false)
  },
  dataSets: questionnaireDataSets,
  serving: async () => (await import('./serving.js')).questionnairesServing,
  demo: async (context) => (await import('./demo.js')).questionnairesDemo(context),
}
