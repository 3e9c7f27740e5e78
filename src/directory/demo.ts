import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Db } from '../db/open.js'
import { type ImportSummary, importDirectory } from './importer.js'
import { resolveSources } from './sources.js'
import { DirectoryStore } from './store.js'

/** The package root (holding package.json), from src/ under tsx or dist/src/ when built. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return dir
}

/** The bundled Plan-Net sample (data/directory/plan-net), imported once into a store that has no directory yet. */
export async function loadDemoDirectory(db: Db): Promise<ImportSummary | undefined> {
  if (new DirectoryStore(db).release() !== 0) return undefined
  return importDirectory(db, await resolveSources([join(packageRoot(), 'data', 'directory', 'plan-net')]))
}
