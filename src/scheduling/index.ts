import type { DomainModule } from '../api/domain.js'
import { SCHEDULING_STEPS } from './schema.js'

/** Slots from SMART Scheduling Links publishers: `/v1/scheduling/*`, `svc publishers`, `svc import publishers`. */
export const scheduling: DomainModule = {
  name: 'scheduling',
  steps: SCHEDULING_STEPS,
  serving: async () => (await import('./serving.js')).schedulingServing,
  demo: async (context) => (await import('./demo.js')).schedulingDemo(context),
}
