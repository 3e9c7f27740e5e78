import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI, runCliJson } from './support/cli.js'

/** The nice value of every thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces; the fields after it are counted from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[16])
  })
}

const dir = mkdtempSync(join(tmpdir(), 'svc-priority-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('an import beside svc serve', () => {
  it.runIf(existsSync('/proc/self/task'))(
    'runs every one of its threads below serving priority, not only its main thread',
    async () => {
      let importPid = 0
      let seen: number[] = []
      // The publisher answers once it has looked at the import's threads: the import is mid-run then.
      const publisher = createServer((_request, response) => {
        seen = threadNiceness(importPid)
        response.writeHead(503).end()
      })
      publisher.listen(0, '127.0.0.1')
      await once(publisher, 'listening')
      try {
        const env = { PATH: process.env.PATH ?? '', SVC_DB: join(dir, 'svc.db') }
        const manifest = `http://127.0.0.1:${(publisher.address() as AddressInfo).port}/$bulk-publish`
        await runCliJson(['publishers', 'add', 'slow', '--manifest', manifest], env)
        const child = spawn(process.execPath, [CLI, 'import', 'publishers'], { env, stdio: 'ignore' })
        importPid = child.pid as number
        await once(child, 'exit')
      } finally {
        publisher.close()
      }
      // Node starts V8's platform threads before any command runs: they are the ones a per-process call misses.
      expect(seen.length).toBeGreaterThan(4)
      expect(seen.every((nice) => nice === 10)).toBe(true)
    },
    30_000,
  )
})
