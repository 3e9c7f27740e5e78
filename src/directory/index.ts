import type { DomainModule } from '../api/domain.js'
import { directoryDataSets } from './dataSets.js'
import { DIRECTORY_STEPS } from './schema.js'
import { checkDirectoryConfig, DIRECTORY_SETTINGS } from './settings.js'

/** The provider directory as FHIR R4: reads and searches, `svc import directory`. */
export const directory: DomainModule = {
  name: 'directory',
  steps: DIRECTORY_STEPS,
  settings: DIRECTORY_SETTINGS,
  checkConfig: checkDirectoryConfig,
  dataSets: directoryDataSets,
  serving: async () => (await import('./serving.js')).directoryServing,
  demo: async (context) => (await import('./demo.js')).directoryDemo(context),
}
