import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package root (holding package.json), from src/ under tsx or dist/src/ when built: where data/ lives. */
export function packageRoot(): string {
  const from = dirname(fileURLToPath(import.meta.url))
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    // At the file system's root a directory is its own parent: without this check the search never ends.
    if (dirname(dir) === dir) throw new Error(`no package.json in ${from} or any directory above it`)
  }
}

/** The `svc` executable of this package: what `svc serve` runs its background imports with. */
export const svcExecutable = () => join(packageRoot(), 'bin', 'run.js')
