import type { DomainModule } from '../api/domain.js'
import { plansDataSets } from './dataSets.js'
import { PLANS_STEPS } from './schema.js'

/** Plan Benefits: Medicare Advantage and ACA Marketplace plans as FHIR InsurancePlan, `svc import plans`. */
export const plans: DomainModule = {
  name: 'plans',
  steps: PLANS_STEPS,
  dataSets: plansDataSets,
  serving: async () => (await import('./serving.js')).plansServing,
  demo: async (context) => (await import('./demo.js')).plansDemo(context),
}
