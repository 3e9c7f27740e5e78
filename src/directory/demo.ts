import { join } from 'node:path'
import type { Db } from '../db/open.js'
import { packageRoot } from '../packageRoot.js'
import { type ImportSummary, importDirectory } from './importer.js'
import { activeRelease } from './releases.js'
import { resolveSources } from './sources.js'

/** The bundled Plan-Net sample (data/directory/plan-net), imported once into a store that has no directory yet. */
export async function loadDemoDirectory(db: Db): Promise<ImportSummary | undefined> {
  if (activeRelease(db)) return undefined
  return importDirectory(db, await resolveSources([join(packageRoot(), 'data', 'directory', 'plan-net')]))
}
