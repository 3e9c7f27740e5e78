import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { RunningServer } from '../../src/app/server.js'
import type { Config } from '../../src/config.js'
import { packageRoot } from '../../src/packageRoot.js'

/** What a built revision's server is started with: its own modules, not this checkout's. */
export interface BuiltRevision {
  label: string
  startServer: (
    options: { db: string; port: number; host: string },
    env: Record<string, string>,
    clock: () => number,
  ) => Promise<RunningServer>
}

const TSC = ['node_modules', 'typescript', 'bin', 'tsc']

function build(dir: string) {
  execFileSync(process.execPath, [join(packageRoot(), ...TSC), '-p', 'tsconfig.build.json'], {
    cwd: dir,
    stdio: 'inherit',
  })
}

async function loaded(label: string, dir: string): Promise<BuiltRevision> {
  const module = (path: string) => import(pathToFileURL(join(dir, 'dist', 'src', path)).href)
  const config = (await module('app/config.js')) as {
    resolveAppConfig: (options: object, env: Record<string, string>) => Promise<Config>
  }
  const server = (await module('app/server.js')) as {
    startServer: (config: Config, clock: () => number) => Promise<RunningServer>
  }
  return {
    label,
    startServer: async (options, env, clock) =>
      server.startServer(await config.resolveAppConfig(options, env), clock),
  }
}

/**
 * This checkout and `revision` (a commit, branch or tag), each built with tsc as `npm run build` does, so
 * that both run the same compiler's output in one process: the revision in a git worktree of its own
 * (sharing this checkout's node_modules), removed by `dispose`. The revision must open the same store.
 */
export async function builtRevisions(revision: string): Promise<{
  base: BuiltRevision
  current: BuiltRevision
  dispose: () => void
}> {
  const root = packageRoot()
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-base-'))
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'inherit' })
  git('worktree', 'add', '--detach', dir, revision)
  const dispose = () => {
    git('worktree', 'remove', '--force', dir)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
    build(dir)
    build(root)
    return { base: await loaded(revision, dir), current: await loaded('this checkout', root), dispose }
  } catch (error) {
    dispose()
    throw error
  }
}
