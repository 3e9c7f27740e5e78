import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CLI, oneLine, runCli, runCliJson, type ServeProcess, startServeProcess } from './support/cli.js'

/** `svc serve --workers 2`: one listening address, two server processes, one store. */
let dir: string
let env: Record<string, string>
let serve: ServeProcess
let key: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-workers-'))
  // Mid-minute, so that the per-minute limit below is counted within one minute.
  env = { SVC_DB: join(dir, 'svc.db'), SVC_FAKE_NOW: '2026-11-21T10:00:20Z' }
  await runCliJson(['orgs', 'create', 'acme'], env)
  key = (await runCliJson<{ key: string }>(['keys', 'create', '--org', 'acme'], env)).key
  serve = await startServeProcess(env, ['--workers', '2', '--sync-interval', '0'])
}, 60_000)

afterAll(async () => {
  await serve?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** The worker processes of the primary, by pid. */
const workers = () =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(serve.child.pid)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0)

/** CPU time a process has used, in clock ticks (user + system). */
const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return Number(fields[11]) + Number(fields[12])
}

/** One request on a connection of its own: node:cluster hands each new connection to the next worker. */
const ask = async (path = '/v1/scheduling/publishers') => {
  const agent = new Agent({ pipelining: 0 })
  try {
    const response = await request(`${serve.url}${path}`, {
      headers: { authorization: `Bearer ${key}` },
      dispatcher: agent,
    })
    await response.body.dump()
    return response.statusCode
  } finally {
    await agent.close()
  }
}

describe('svc serve --workers', () => {
  it('serves one address from every worker, and a plan limit stays exact across them', async () => {
    expect(serve.output()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ .*2 worker processes/)
    const pids = workers()
    expect(pids).toHaveLength(2)
    const before = pids.map(cpuTicks)
    // Developer allows 60 requests a minute: 80 on fresh connections, spread over both workers.
    const statuses: number[] = []
    for (let batch = 0; batch < 8; batch++)
      statuses.push(...(await Promise.all(Array.from({ length: 10 }, () => ask()))))
    expect(statuses.filter((status) => status === 200)).toHaveLength(60)
    expect(statuses.filter((status) => status === 429)).toHaveLength(20)
    const after = pids.map(cpuTicks)
    pids.forEach((_, index) => expect(after[index]).toBeGreaterThan(before[index] as number))
  })

  it('shows every worker in svc top with its event-loop delay', async () => {
    // SVC_FAKE_NOW fixes the servers' clock; top reads with the same one.
    await vi.waitFor(
      async () => {
        const top = await runCliJson<{ servers: { pid: number; loopP99Ms: number; loopMaxMs: number }[] }>(
          ['top'],
          env,
        )
        expect(top.servers.map((server) => server.pid).sort()).toEqual(workers().sort())
        for (const server of top.servers) {
          expect(server.loopP99Ms).toBeGreaterThanOrEqual(0)
          expect(server.loopMaxMs).toBeGreaterThanOrEqual(server.loopP99Ms)
        }
      },
      { timeout: 10_000, interval: 250 },
    )
  })

  it("sums every worker's last minute in the dashboard's live figures", async () => {
    const operator = spawn(
      process.execPath,
      [CLI, 'operators', 'create', 'ops@example.org', '--password-stdin'],
      {
        env: { PATH: process.env.PATH ?? '', ...env },
      },
    )
    operator.stdin.end('a long enough password\n')
    expect(await new Promise((resolve) => operator.on('close', resolve))).toBe(0)
    const signIn = await request(`${serve.url}/dashboard/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: serve.url },
      body: 'email=ops%40example.org&password=a+long+enough+password',
    })
    await signIn.body.dump()
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string
    // The 80 requests of the first test, whichever worker answered them (each reports its own each second).
    await vi.waitFor(
      async () => {
        const live = await request(`${serve.url}/dashboard/live.json`, { headers: { cookie } })
        expect(((await live.body.json()) as { requestsPerMinute: number }).requestsPerMinute).toBe(80)
      },
      { timeout: 10_000, interval: 250 },
    )
  })

  it('starts a worker again when one dies, and keeps answering', async () => {
    const [victim] = workers()
    process.kill(victim as number, 'SIGKILL')
    await vi.waitFor(
      () => {
        const now = workers()
        expect(now).toHaveLength(2)
        expect(now).not.toContain(victim)
      },
      { timeout: 10_000, interval: 100 },
    )
    expect(serve.output()).toContain(`svc serve worker ${victim} ended (SIGKILL); starting another`)
    expect(await ask('/openapi.json')).toBe(200)
  })

  it('closes every worker cleanly on SIGTERM and exits 0', async () => {
    const second = await startServeProcess(env, ['--workers', '2', '--sync-interval', '0'])
    const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(second.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0)
    expect(pids).toHaveLength(2)
    const exited = new Promise<number | null>((resolve) => second.child.once('exit', resolve))
    second.child.kill('SIGTERM')
    expect(await exited).toBe(0)
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow()
  })

  it('fails with the reason when a worker cannot start (the port is taken)', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const result = await runCli(
        ['serve', '--workers', '2', '--port', String(port), '--sync-interval', '0'],
        env,
      )
      expect(result.code).toBe(2)
      expect(oneLine(result.stderr)).toContain('An svc serve worker could not start')
      expect(oneLine(result.stderr)).toContain(
        `Cannot listen on 127.0.0.1:${port}: the address is in use (another svc serve or svc demo?)`,
      )
    } finally {
      taken.close()
    }
  })

  it('says in one line why one process cannot listen, and exits 2 (the port is taken)', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const runs = [
        { args: ['serve', '--workers', '1'], env },
        // The demo loads its data first, into a store of its own.
        { args: ['demo'], env: { ...env, SVC_DB: join(dir, 'demo.db') } },
      ]
      for (const run of runs) {
        const result = await runCli([...run.args, '--port', String(port), '--sync-interval', '0'], run.env)
        expect(result.code).toBe(2)
        expect(oneLine(result.stderr)).toContain(
          `Cannot listen on 127.0.0.1:${port}: the address is in use (another svc serve or svc demo?); choose another port with --port or SVC_PORT`,
        )
        expect(result.stderr).not.toContain('    at ')
        // The demo makes its key once it listens: none is printed, and none is left in its store (below).
        expect(result.stdout).not.toContain('svc_sk_')
      }
      expect(await runCliJson(['keys', 'list'], { ...env, SVC_DB: join(dir, 'demo.db') })).toEqual([])
    } finally {
      taken.close()
    }
  })
})
