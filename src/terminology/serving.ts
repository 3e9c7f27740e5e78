import { defineServing } from '../api/domain.js'
import { ensureBundledTerminology } from './bundled.js'
import { buildTerminologyCapabilities } from './capabilities.js'
import { terminologyEndpoints } from './endpoints.js'
import { createTerminology } from './terminology.js'

export const terminologyServing = defineServing({
  createState: createTerminology,
  endpoints: terminologyEndpoints,
  // Reference terminology is loaded before the first request, so no answer depends on a load in progress.
  warmUp: (terminology) => {
    ensureBundledTerminology(terminology.db, terminology.clock())
  },
  metadataModes: (terminology) => ({ terminology: () => buildTerminologyCapabilities(terminology) }),
})
