import type { DomainModule } from '../api/domain.js'
import { createOrganization, findOrganization } from './orgs.js'
import { ACCOUNTS_LIVE_STEPS, ACCOUNTS_STEPS } from './schema.js'

/** Organizations, plans, API keys and usage: `svc orgs`, `svc keys`; checked on every request under /v1. */
export const accounts: DomainModule = {
  name: 'accounts',
  steps: ACCOUNTS_STEPS,
  liveSteps: ACCOUNTS_LIVE_STEPS,
  demo: async ({ db, now }) => {
    if (findOrganization(db, 'demo')) return []
    createOrganization(db, { slug: 'demo', name: 'Demo organization' }, now)
    return ['Organization "demo" created.']
  },
}
