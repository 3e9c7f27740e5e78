import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI, runCli, runCliJson } from './support/cli.js'

/** Linux's number for the idle scheduling policy (sched.h). */
const SCHED_IDLE = 5

/** The nice value and scheduling policy of every thread of a process (fields 19 and 41 of its tasks' stat). */
function threadPriorities(pid: number): { nice: number; policy: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces; the fields after it are counted from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { nice: Number(fields[16]), policy: Number(fields[38]) }
  })
}

const dir = mkdtempSync(join(tmpdir(), 'svc-priority-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `svc import publishers` on a publisher that looks at the import's threads before it answers (503). */
async function importThreads(
  name: string,
  env: Record<string, string>,
): Promise<{ seen: ReturnType<typeof threadPriorities>; stderr: string }> {
  let importPid = 0
  let seen: ReturnType<typeof threadPriorities> = []
  // The publisher answers once it has looked at the import's threads: the import is mid-run then.
  const publisher = createServer((_request, response) => {
    seen = threadPriorities(importPid)
    response.writeHead(503).end()
  })
  publisher.listen(0, '127.0.0.1')
  await once(publisher, 'listening')
  let stderr = ''
  try {
    const withDb = { ...env, SVC_DB: join(dir, `${name}.db`) }
    const manifest = `http://127.0.0.1:${(publisher.address() as AddressInfo).port}/$bulk-publish`
    await runCliJson(['publishers', 'add', 'slow', '--manifest', manifest], withDb)
    const child = spawn(process.execPath, [CLI, 'import', 'publishers'], {
      env: withDb,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    importPid = child.pid as number
    await once(child, 'exit')
  } finally {
    publisher.close()
  }
  // Node starts V8's platform threads before any command runs: they are the ones a per-process call misses.
  expect(seen.length).toBeGreaterThan(4)
  return { seen, stderr }
}

const onLinux = existsSync('/proc/self/task')
const path = process.env.PATH ?? ''
const hasChrt = path.split(':').some((folder) => existsSync(join(folder, 'chrt')))

describe('an import beside svc serve', () => {
  it.runIf(onLinux)(
    'runs every one of its threads below serving priority, not only its main thread',
    async () => {
      const { seen } = await importThreads('low', { PATH: path })
      expect(seen.every(({ nice }) => nice === 10)).toBe(true)
    },
    30_000,
  )

  it.runIf(onLinux && hasChrt)(
    'runs every thread under the idle policy when importPriority is idle',
    async () => {
      const { seen, stderr } = await importThreads('idle', { PATH: path, SVC_IMPORT_PRIORITY: 'idle' })
      expect(seen.every(({ policy }) => policy === SCHED_IDLE)).toBe(true)
      expect(stderr).not.toContain('importPriority')
    },
    30_000,
  )

  it.runIf(onLinux)(
    'says so and runs at niceness 19 when the idle policy cannot be had',
    async () => {
      // No chrt on this PATH (node itself is started by its full path).
      const { seen, stderr } = await importThreads('no-chrt', { PATH: dir, SVC_IMPORT_PRIORITY: 'idle' })
      expect(seen.every(({ nice, policy }) => nice === 19 && policy !== SCHED_IDLE)).toBe(true)
      expect(stderr.replace(/\s+/g, ' ')).toContain('importPriority idle needs chrt')
    },
    30_000,
  )

  it.runIf(onLinux)(
    'has svc serve say at start that its syncs cannot run idle, where they cannot',
    async () => {
      const logOf = async (env: Record<string, string>) => {
        const server = spawn(
          process.execPath,
          [CLI, 'serve', '--port', '0', '--workers', '1', '--db', join(dir, 'serve.db')],
          { env: { ...env, SVC_IMPORT_PRIORITY: 'idle' }, stdio: ['ignore', 'pipe', 'pipe'] },
        )
        let log = ''
        server.stdout.on('data', (chunk) => (log += chunk))
        // The sync's schedule is its last start-up line, after the warning.
        while (!log.includes('publishers sync every')) await once(server.stdout, 'data')
        server.kill('SIGTERM')
        await once(server, 'exit')
        return log.replace(/\s+/g, ' ')
      }
      expect(await logOf({ PATH: dir })).toContain(
        'importPriority idle needs chrt (util-linux) and a platform that allows SCHED_IDLE; the publisher syncs this server runs will run at niceness 19',
      )
      if (hasChrt) expect(await logOf({ PATH: path })).not.toContain('importPriority')
    },
    30_000,
  )

  it('refuses a priority it does not know, naming the setting', async () => {
    const result = await runCli(['import', 'publishers'], {
      SVC_DB: join(dir, 'refused.db'),
      SVC_IMPORT_PRIORITY: 'lowest',
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('Invalid setting SVC_IMPORT_PRIORITY: "lowest" (must be low or idle)')
  })
})
