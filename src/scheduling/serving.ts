import { defineServing } from '../api/domain.js'
import { schedulingEndpoints } from './endpoints.js'
import { SlotIndex } from './search/slotIndex.js'

/** Slot search holds every served series in memory, per app: loaded before the first search. */
export const schedulingServing = defineServing({
  createState: ({ db }) => new SlotIndex(db),
  endpoints: schedulingEndpoints,
  warmUp: (index) => index.refresh(),
})
