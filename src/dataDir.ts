import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package's bundled `data/` folder. Found by walking up from this module, since it runs both from
 * `src/` (tsx, tests) and from `dist/src/` (the installed CLI), at different depths.
 */
export function bundledDataDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('svc package root not found')
    dir = parent
  }
  return join(dir, 'data')
}
