import type { DomainModule } from '../api/domain.js'
import { TERMINOLOGY_STEPS } from './schema.js'
import { TERMINOLOGY_SOURCES } from './settings.js'

/** Code systems and value sets: `$lookup`, `$validate-code`, `$expand`, `$counties`, `svc import terminology`. */
export const terminology: DomainModule = {
  name: 'terminology',
  steps: TERMINOLOGY_STEPS,
  settings: [TERMINOLOGY_SOURCES],
  serving: async () => (await import('./serving.js')).terminologyServing,
  demo: async (context) => (await import('./demo.js')).terminologyDemo(context),
}
