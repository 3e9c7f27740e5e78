import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { runCli, runCliJson, type ServeProcess, startServeProcess } from './support/cli.js'

/** Two real `svc serve` processes on one database file, with the clock frozen mid-minute. */
let dir: string
let env: Record<string, string>
let servers: ServeProcess[]
let key: string
let keyId: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-multi-'))
  env = { SVC_DB: join(dir, 'svc.db'), SVC_FAKE_NOW: '2026-11-21T10:00:20Z' }
  await runCliJson(['orgs', 'create', 'acme'], env)
  const created = await runCliJson<{ key: string; id: string }>(['keys', 'create', '--org', 'acme'], env)
  key = created.key
  keyId = created.id
  servers = await Promise.all([startServeProcess(env), startServeProcess(env)])
})

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()))
  rmSync(dir, { recursive: true, force: true })
})

const status = async (url: string) => {
  const response = await request(`${url}/v1/scheduling/publishers`, {
    headers: { authorization: `Bearer ${key}` },
  })
  await response.body.dump()
  return response.statusCode
}

describe('two server processes on one database', () => {
  it('never overshoot the per-minute limit under concurrent load', async () => {
    // 200 requests at once, alternating between the processes, against Developer's 60 a minute.
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => status(servers[i % 2]?.url as string)),
    )
    expect(statuses.filter((code) => code === 200)).toHaveLength(60)
    expect(statuses.filter((code) => code === 429)).toHaveLength(140)
  })

  it('log every request, found by its id with `svc requests show` once written', async () => {
    const response = await request(`${servers[0]?.url}/v1/scheduling/publishers?npi=1234567890`, {
      headers: { authorization: `Bearer ${key}` },
    })
    await response.body.dump()
    const id = response.headers['x-request-id'] as string
    // The log is written in batches of up to a second: poll the lookup rather than sleep a fixed time.
    const logged = await vi.waitFor(() => runCliJson(['requests', 'show', id], env), {
      timeout: 10_000,
      interval: 250,
    })
    expect(logged).toMatchObject({
      requestId: id,
      org: 'acme',
      keyId,
      method: 'GET',
      path: '/v1/scheduling/publishers',
    })
    expect(logged.status).toBe(429)
    expect(JSON.stringify(logged)).not.toContain(key)
    // The same flush stamped the key's last use (in the live database), shown by `svc keys list`.
    const keys = await runCliJson<{ id: string; lastUsedAt: string | null }[]>(['keys', 'list'], env)
    expect(keys.find((listed) => listed.id === keyId)?.lastUsedAt).toBe('2026-11-21T10:00:20.000Z')
  })

  it('see a revocation at once in every process', async () => {
    const result = await runCli(['keys', 'revoke', keyId], env)
    expect(result.code).toBe(0)
    for (const server of servers) expect(await status(server.url)).toBe(401)
  })
})
