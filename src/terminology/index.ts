import type { DomainModule } from '../api/domain.js'
import { terminologyDataSets } from './dataSets.js'
import { TERMINOLOGY_STEPS } from './schema.js'
import { settingOf } from '../config.js'
import { checkCredentialsTransport } from '../upstream/settings.js'
import { TERMINOLOGY_SOURCES } from './settings.js'

/** Code systems and value sets: `$lookup`, `$validate-code`, `$expand`, `$counties`, `svc import terminology`. */
export const terminology: DomainModule = {
  name: 'terminology',
  steps: TERMINOLOGY_STEPS,
  settings: [TERMINOLOGY_SOURCES],
  checkConfig: (config) => {
    for (const url of Object.values(settingOf(config, TERMINOLOGY_SOURCES) ?? {}))
      checkCredentialsTransport(url, TERMINOLOGY_SOURCES.env, false)
  },
  dataSets: terminologyDataSets,
  serving: async () => (await import('./serving.js')).terminologyServing,
  demo: async (context) => (await import('./demo.js')).terminologyDemo(context),
}
