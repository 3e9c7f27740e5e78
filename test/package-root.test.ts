import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { packageRoot } from '../src/packageRoot.js'

const dir = mkdtempSync(join(tmpdir(), 'svc-package-root-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the package root', () => {
  it('is the directory holding package.json', () => {
    expect(packageRoot()).toBe(fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, ''))
  })

  it('fails with a reason, rather than search for ever, where no directory above holds package.json', () => {
    // The built module alone in a directory of the temporary folder (pretest builds it).
    const built = fileURLToPath(new URL('../dist/src/packageRoot.js', import.meta.url))
    copyFileSync(built, join(dir, 'packageRoot.mjs'))
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `(await import(${JSON.stringify(join(dir, 'packageRoot.mjs'))})).packageRoot()`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    )
    expect(run.signal).toBeNull()
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(`no package.json in ${dir} or any directory above it`)
  })
})
