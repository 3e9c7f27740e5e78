import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package root (holding package.json), from src/ under tsx or dist/src/ when built: where data/ lives. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return dir
}

/** The `svc` executable of this package: what `svc serve` runs its background imports with. */
export const svcExecutable = () => join(packageRoot(), 'bin', 'run.js')
