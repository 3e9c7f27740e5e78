import { afterEach, describe, expect, it } from 'vitest'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

let t: TestServer
afterEach(() => t?.close())

const PATH = '/v1/scheduling/publishers'

async function burst(count: number, path = PATH) {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) statuses.push((await t.get(path, bearer(t.key))).status)
  return statuses
}

/** Requests counted in a period, once this process has settled the usage it leased. */
const usageOf = async (period: string) => {
  await t.server.flush()
  return (
    (t.server.live.prepare('SELECT count FROM usage_counters WHERE period = ?').pluck().get(period) as
      number | undefined) ?? 0
  )
}

describe('per-minute limit', () => {
  it('refuses the 61st request of a minute on Developer with Retry-After to the minute boundary', async () => {
    t = await startTestServer({ now: '2026-11-21T10:00:15.000Z' })
    const statuses = await burst(60)
    expect(statuses.every((status) => status === 200)).toBe(true)
    const refused = await t.get(PATH, bearer(t.key))
    expect(refused.status).toBe(429)
    expect(refused.json).toMatchObject({ type: expect.stringMatching(/#rate-limited$/), status: 429 })
    expect(refused.headers['retry-after']).toBe('45')
    t.setNow('2026-11-21T10:00:59.400Z')
    expect((await t.get(PATH, bearer(t.key))).headers['retry-after']).toBe('1')
    t.setNow('2026-11-21T10:01:00.000Z')
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
  })

  it('is coded throttled on the FHIR base', async () => {
    t = await startTestServer({ now: '2026-11-21T10:00:00.000Z' })
    await burst(60)
    const refused = await t.get('/v1/fhir/r4/metadata', bearer(t.key))
    expect(refused.status).toBe(429)
    expect(refused.json.issue[0].code).toBe('throttled')
    expect(refused.headers['retry-after']).toBe('60')
  })

  it('does not count 429 or 401 answers', async () => {
    t = await startTestServer({ now: '2026-11-21T10:00:00.000Z' })
    await burst(62)
    await t.get(PATH, bearer(`${t.key.slice(0, -3)}AAA`))
    expect(await usageOf(`m:${Math.floor(t.now() / 60_000)}`)).toBe(60)
    expect(await usageOf('M:2026-11')).toBe(60)
  })

  it('counts every organization across its keys and plans by plan', async () => {
    t = await startTestServer({ plan: 'team', now: '2026-11-21T10:00:00.000Z' })
    const { createKey } = await import('../src/accounts/keys.js')
    const second = createKey(t.server.db, { org: 'acme' }).key
    for (let i = 0; i < 300; i++) {
      const status = (await t.get(PATH, bearer(i % 2 === 0 ? t.key : second))).status
      expect(status).toBe(200)
    }
    expect(await usageOf(`m:${Math.floor(t.now() / 60_000)}`)).toBe(300)
  })
})

describe('monthly allowance', () => {
  const fillMonth = (count: number) => {
    const orgId = t.server.db.prepare("SELECT id FROM organizations WHERE slug = 'acme'").pluck().get()
    t.server.live
      .prepare("INSERT INTO usage_counters (org_id, period, count) VALUES (?, 'M:2026-11', ?)")
      .run(orgId, count)
  }

  it('refuses Developer past 1,000 until 00:00 UTC on the 1st, then resumes', async () => {
    t = await startTestServer({ now: '2026-11-30T23:58:00.000Z' })
    fillMonth(999)
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
    const refused = await t.get(PATH, bearer(t.key))
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('120')
    expect(refused.json.detail).toMatch(/2026-12-01T00:00:00.000Z/)
    t.setNow('2026-12-01T00:00:00.000Z')
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
  })

  it('lets Team and Scale continue past the allowance', async () => {
    t = await startTestServer({ plan: 'team', now: '2026-11-21T10:00:00.000Z' })
    fillMonth(50_000)
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
    expect(await usageOf('M:2026-11')).toBe(50_001)
  })

  it('takes a plan change into account on the next request', async () => {
    t = await startTestServer({ now: '2026-11-21T10:00:00.000Z' })
    fillMonth(1_000)
    expect((await t.get(PATH, bearer(t.key))).status).toBe(429)
    const { setOrganizationPlan } = await import('../src/accounts/orgs.js')
    setOrganizationPlan(t.server.db, 'acme', 'team')
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
  })
})

describe('the 2026-11-01 start', () => {
  it('refuses nothing before 2026-11-01T00:00:00Z and applies limits from that instant', async () => {
    t = await startTestServer({ now: '2026-10-31T23:59:00.000Z' })
    const before = await burst(70)
    expect(before.every((status) => status === 200)).toBe(true)
    t.setNow('2026-10-31T23:59:59.999Z')
    expect((await t.get(PATH, bearer(t.key))).status).toBe(200)
    t.setNow('2026-11-01T00:00:00.000Z')
    const after = await burst(61)
    expect(after.filter((status) => status === 429)).toHaveLength(1)
    expect(after.at(-1)).toBe(429)
  })
})
