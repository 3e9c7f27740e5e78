import { defineServing } from '../api/domain.js'
import { createPlans, plansEndpoints } from './endpoints.js'

export const plansServing = defineServing({ createState: createPlans, endpoints: plansEndpoints })
