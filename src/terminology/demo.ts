import { join } from 'node:path'
import type { DemoContext } from '../api/domain.js'
import { packageRoot } from '../packageRoot.js'
import type { Db } from '../db/open.js'
import { ensureBundledTerminology } from './bundled.js'
import { importTerminology } from './import/importFiles.js'
import { NUCC_SYSTEM } from './import/nucc.js'
import { findCodeSystem } from './store.js'

/** The demo's terminology beyond the bundled sets: the NUCC taxonomy, unless a release is already held. */
async function loadDemoTerminology(db: Db, now: number): Promise<string | undefined> {
  if (findCodeSystem(db, NUCC_SYSTEM)) return undefined
  const file = join(packageRoot(), 'data', 'demo', 'terminology', 'nucc_provider_taxonomy.csv')
  await importTerminology(db, [file], { release: 'demo', now })
  return 'NUCC provider taxonomy (release "demo")'
}

/** The domain's demo step: the bundled reference sets and the NUCC taxonomy. */
export async function terminologyDemo({ db, now }: DemoContext): Promise<string[]> {
  const nucc = await loadDemoTerminology(db, now)
  const loaded = [...ensureBundledTerminology(db, now), ...(nucc === undefined ? [] : [nucc])]
  return loaded.length > 0 ? [`Terminology loaded: ${loaded.join(', ')}.`] : []
}
