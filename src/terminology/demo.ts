import { join } from 'node:path'
import { bundledDataDir } from '../dataDir.js'
import type { Db } from '../db/open.js'
import { importTerminology } from './import/importFiles.js'
import { NUCC_SYSTEM } from './import/nucc.js'
import { findCodeSystem } from './store.js'

/** The demo's terminology beyond the bundled sets: the NUCC taxonomy, unless a release is already held. */
export function loadDemoTerminology(db: Db, now: number): string | undefined {
  if (findCodeSystem(db, NUCC_SYSTEM)) return undefined
  const file = join(bundledDataDir(), 'demo', 'terminology', 'nucc_provider_taxonomy.csv')
  importTerminology(db, [file], { release: 'demo', now })
  return 'NUCC provider taxonomy (release "demo")'
}
