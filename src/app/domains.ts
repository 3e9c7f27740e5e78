import { accounts } from '../accounts/index.js'
import type { DomainModule } from '../api/domain.js'
import { directory } from '../directory/index.js'
import { medlist } from '../medlist/index.js'
import { scheduling } from '../scheduling/index.js'
import { stats } from '../stats/index.js'
import { plans } from '../plans/index.js'
import { questionnaires } from '../questionnaires/index.js'
import { terminology } from '../terminology/index.js'

/**
 * Every domain of the appliance, once: the schema, the router, the warm-ups, the demo and the
 * CapabilityStatement are all built by walking this list. Adding a domain is its folder and one line here.
 */
export const DOMAINS: readonly DomainModule[] = [
  accounts,
  stats,
  scheduling,
  terminology,
  directory,
  plans,
  questionnaires,
  medlist,
]
