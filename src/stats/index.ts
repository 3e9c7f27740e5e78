import type { DomainModule } from '../api/domain.js'
import { STATS_LIVE_STEPS, STATS_STEPS } from './schema.js'

/** The request log every server writes, and what `svc top` and `svc requests` read of it. */
export const stats: DomainModule = {
  name: 'stats',
  steps: STATS_STEPS,
  liveSteps: STATS_LIVE_STEPS,
}
