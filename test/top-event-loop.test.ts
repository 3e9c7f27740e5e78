import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { startTestServer, type TestServer } from './support/harness.js'

/** What `svc top --json` says of the serving processes: each with its event-loop delay, gone once closed. */
let t: TestServer
beforeAll(async () => {
  t = await startTestServer()
})
afterAll(() => t.close())

const servers = async () => {
  const result = await runCli(['top', '--once', '--json'], {
    SVC_DB: t.dbPath,
    SVC_FAKE_NOW: new Date(t.now()).toISOString(),
  })
  return JSON.parse(result.stdout).servers as { pid: number; loopP99Ms: number; loopMaxMs: number }[]
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('svc top and the serving processes', () => {
  it('shows how long the event loop of each held callbacks up lately, and forgets a process that closed', async () => {
    // This process serves t, whose request log reports every 20 ms: a 120 ms block shows in its next report.
    await pause(30)
    const started = performance.now()
    while (performance.now() - started < 120);
    await pause(60)
    const self = (await servers()).find((server) => server.pid === process.pid)
    expect(self?.loopMaxMs).toBeGreaterThan(100)
    expect(self?.loopP99Ms).toBeGreaterThanOrEqual(0)

    await t.server.close()
    expect(await servers()).toEqual([])
  })
})
