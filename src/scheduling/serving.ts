import { defineServing } from '../api/domain.js'
import { schedulingEndpoints } from './endpoints.js'
import { SeriesIndex } from './seriesIndex.js'

/** Slot search holds every served series in memory, per app: loaded before the first search. */
export const schedulingServing = defineServing({
  createState: ({ db }) => new SeriesIndex(db),
  endpoints: schedulingEndpoints,
  warmUp: (index) => index.refresh(),
})
