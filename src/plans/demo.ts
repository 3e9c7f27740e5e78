import { join } from 'node:path'
import type { DemoContext } from '../api/domain.js'
import { activeRelease } from '../fhir/store/releases.js'
import { packageRoot } from '../packageRoot.js'
import { PLANS_STORE } from './declaration.js'
import { importPlans } from './import/importPlans.js'

/** The bundled excerpts of the federal plan files (data/plans), imported once into a store with no plans yet. */
export async function plansDemo({ db, now }: DemoContext): Promise<string[]> {
  if (activeRelease(db, PLANS_STORE.name)) return []
  const summary = await importPlans(db, [join(packageRoot(), 'data', 'plans')], { now: () => now })
  return [
    `Plan Benefits: ${summary.partitions.map((partition) => `${partition.plans} ${partition.program === 'qhp' ? 'ACA' : 'Medicare Advantage'} plans of ${partition.year}`).join(' and ')} imported from the bundled CMS excerpts.`,
  ]
}
