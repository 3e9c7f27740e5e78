import type { DomainModule } from '../api/domain.js'
import { MEDLIST_ORGANIZATION } from './settings.js'

/** MedList: `$reconcile-medications`, one patient's medication records into one US Core list. Keeps nothing. */
export const medlist: DomainModule = {
  name: 'medlist',
  settings: [MEDLIST_ORGANIZATION],
  serving: async () => (await import('./serving.js')).medListServing,
}
