import type { DemoContext } from '../api/domain.js'
import { loadCurated } from './curated.js'

/** The curated set is in every store from its creation; a store that lost some of them gets them back. */
export async function questionnairesDemo({ db, now }: DemoContext): Promise<string[]> {
  const restored = loadCurated(db, new Date(now).toISOString())
  const held = db.prepare("SELECT count(*) FROM questionnaire_held WHERE origin = 'curated'").pluck().get()
  return [`Questionnaires: ${held} of the curated set held${restored > 0 ? ` (${restored} restored)` : ''}.`]
}
