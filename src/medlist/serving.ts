import { defineServing } from '../api/domain.js'
import { createMedList, medListEndpoints } from './endpoints.js'

export const medListServing = defineServing({ createState: createMedList, endpoints: medListEndpoints })
