import { defineServing } from '../api/domain.js'
import { createQuestionnaires, questionnaireEndpoints } from './endpoints.js'

export const questionnairesServing = defineServing({
  createState: createQuestionnaires,
  endpoints: questionnaireEndpoints,
})
