import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { runCliJson } from './support/cli.js'
import { PLAN_NET } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

let t: TestServer | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

/** What this process holds open of the store's directory release files. */
function releaseFilesOpen(dir: string): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      return target.startsWith(dir) && /\.directory-\d+\.db/.test(target) ? [target] : []
    } catch {
      return []
    }
  })
}

/** Whether this process holds a shared (read) lock on `file` now, as /proc/locks lists POSIX locks. */
function holdsReadLock(file: string): boolean {
  const inode = statSync(file).ino
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .some((line) => {
      const [, , , kind, pid, device] = line.trim().split(/\s+/)
      return kind === 'READ' && Number(pid) === process.pid && device?.endsWith(`:${inode}`)
    })
}

describe('a new directory release going live under a running server', () => {
  it('is served from the next request, and the replaced file is let go of, not kept open', async () => {
    t = await startTestServer()
    const server = t
    const env = { SVC_DB: server.dbPath }
    const read = async () => (await server.get('/v1/fhir/r4/Practitioner?name=a', bearer(server.key))).json
    for (let release = 1; release <= 3; release++) {
      const summary = await runCliJson<{ release: number }>(['import', 'directory', PLAN_NET], env)
      const page = await read()
      expect(page.resourceType).toBe('Bundle')
      expect(page.entry.length).toBeGreaterThan(0)
      // The replaced file was removed by the import: our descriptor of it closes off the event loop.
      await expect
        .poll(() => releaseFilesOpen(server.dir).filter((file) => file.endsWith('(deleted)')))
        .toEqual([])
      const open = releaseFilesOpen(server.dir)
      expect(open.length).toBeGreaterThan(0)
      expect(open.every((file) => file.includes(`.directory-${summary.release}.db`))).toBe(true)
      await sleep(1)
    }
  })

  it('is read under one shared lock held while it is served, not locked and checked again by every statement', async () => {
    t = await startTestServer()
    const server = t
    const env = { SVC_DB: server.dbPath }
    for (let release = 1; release <= 2; release++) {
      await runCliJson(['import', 'directory', PLAN_NET], env)
      const answer = await server.get('/v1/fhir/r4/Practitioner?name=a', bearer(server.key))
      expect(answer.status).toBe(200)
      const [file] = releaseFilesOpen(server.dir).filter((open) => !open.endsWith('(deleted)'))
      expect(file).toBeDefined()
      // Between requests: a lock taken and dropped per statement would be gone by now.
      expect(holdsReadLock(file as string)).toBe(true)
    }
  })
})
