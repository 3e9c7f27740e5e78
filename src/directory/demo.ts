import { join } from 'node:path'
import type { DemoContext } from '../api/domain.js'
import { packageRoot } from '../packageRoot.js'
import { importDirectory } from './importer.js'
import { activeDirectoryRelease } from './releases.js'
import { resolveSources } from '../ingest/sources.js'

/** The bundled Plan-Net sample (data/directory/plan-net), imported once into a store that has no directory yet. */
export async function directoryDemo({ db }: DemoContext): Promise<string[]> {
  if (activeDirectoryRelease(db)) return []
  const summary = await importDirectory(
    db,
    await resolveSources([join(packageRoot(), 'data', 'directory', 'plan-net')]),
  )
  return [`Provider directory: ${summary.imported} Plan-Net sample resources imported.`]
}
