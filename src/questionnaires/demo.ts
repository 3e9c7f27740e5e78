import type { DemoContext } from '../api/domain.js'
import { loadCurated } from './curated.js'

/** The curated set is in every store from its creation; a store that lost some of them gets them back. */
export async function questionnairesDemo({ db, now }: DemoContext): Promise<string[]> {
  const added = loadCurated(db, new Date(now).toISOString())
  return added > 0 ? [`Questionnaires: ${added} of the curated set restored.`] : []
}
