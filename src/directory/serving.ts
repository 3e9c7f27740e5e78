import { defineServing } from '../api/domain.js'
import { createDirectory, directoryEndpoints } from './endpoints.js'

export const directoryServing = defineServing({
  createState: createDirectory,
  endpoints: directoryEndpoints,
})
