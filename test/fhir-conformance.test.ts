import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { importPlans } from '../src/plans/import/importPlans.js'
import { importPlanNet } from './support/directory.js'
import { hang, json, startFakeUpstream, type FakeUpstream } from './support/fakeUpstream.js'
import { expectValidR4, profileFixture } from './support/fhirValidator.js'
import { PLANS } from './support/fixtures.js'
import { bearer, startTestServer, type TestResponse, type TestServer } from './support/harness.js'
import { rawRequest } from './support/rawHttp.js'

/**
 * Everything the FHIR base builds, checked by an independent validator (Medplum's, over the R4 base
 * definitions): one real answer of each kind, fetched through the real server. A new endpoint that builds
 * resources adds its case here.
 */
const BASE = '/v1/fhir/r4'
const ACA = join(PLANS, 'aca')
const ACA_FILES = ['plan-attributes.csv', 'service-area.csv', 'network.csv'].map((name) => join(ACA, name))
const MA_2026 = join(PLANS, 'ma', 'constructed', 'pbp-2026')
const MA_2027 = join(PLANS, 'ma', 'pbp-2027')
const BENEFITS = join(ACA, 'constructed', 'benefits-cost-sharing-py2025.csv')
const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm'

let t: TestServer
let remote: TestServer
let fake: FakeUpstream
let developerKey: string

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importPlanNet(t)
  await importPlans(t.server.db, [...ACA_FILES, BENEFITS, MA_2026, MA_2027], { now: t.now })
  createOrganization(t.server.db, { slug: 'small', name: 'Small', plan: 'developer' })
  developerKey = createKey(t.server.db, { org: 'small' }).key
  fake = await startFakeUpstream()
  remote = await startTestServer({
    plan: 'scale',
    env: { SVC_DIRECTORY_URL: fake.base, SVC_DIRECTORY_TIMEOUT_MS: '200' },
    upstream: { sleep: async () => undefined },
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await remote.close()
  await fake.close()
})

const get = (path: string, server = t) => server.get(`${BASE}/${path}`, bearer(server.key))
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  t.postFhir(`${BASE}/${path}`, body, headers)

/** The answer is valid R4 and of the kind and status expected. */
function conforms(response: TestResponse, status: number, resourceType: string) {
  expect(response.status, response.text.slice(0, 300)).toBe(status)
  expect(response.json.resourceType).toBe(resourceType)
  expectValidR4(response.json)
  return response.json
}

describe('what the FHIR base builds is valid R4', () => {
  it('CapabilityStatement, TerminologyCapabilities', async () => {
    conforms(await get('metadata'), 200, 'CapabilityStatement')
    conforms(await get('metadata?mode=terminology'), 200, 'TerminologyCapabilities')
  })

  it('Parameters of $lookup, $validate-code, $counties and $in-network; the ValueSet of $expand', async () => {
    conforms(
      await get('CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=female'),
      200,
      'Parameters',
    )
    conforms(
      await post('CodeSystem/$validate-code', {
        resourceType: 'Parameters',
        parameter: [
          { name: 'url', valueUri: 'http://hl7.org/fhir/administrative-gender' },
          { name: 'code', valueCode: 'other' },
        ],
      }),
      200,
      'Parameters',
    )
    conforms(await get('InsurancePlan/$counties?state=RI'), 200, 'Parameters')
    conforms(await get('InsurancePlan/H1234-001-001-2026/$in-network?npi=1234567893'), 200, 'Parameters')
    conforms(
      await post('ValueSet/$expand', {
        resourceType: 'Parameters',
        parameter: [
          { name: 'url', valueUri: 'http://hl7.org/fhir/ValueSet/administrative-gender' },
          { name: 'count', valueInteger: 2 },
        ],
      }),
      200,
      'ValueSet',
    )
  })

  it('searchset and batch-response Bundles, InsurancePlans, and MedicationRequests with their Provenances', async () => {
    const plans = conforms(await get('InsurancePlan?state=FL&_count=3'), 200, 'Bundle')
    expect(plans.entry.length).toBeGreaterThan(0)
    for (const entry of plans.entry) expectValidR4(entry.resource)
    conforms(await get('InsurancePlan/H1234-001-001-2026'), 200, 'InsurancePlan')
    conforms(await get('Practitioner?name=smith&_include=PractitionerRole:practitioner'), 200, 'Bundle')
    const batch = conforms(
      await post('', {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [
          { request: { method: 'GET', url: 'metadata' } },
          { request: { method: 'GET', url: 'Practitioner/nope' } },
          { request: { method: 'GET', url: 'InsurancePlan?state=FL&_count=1' } },
        ],
      }),
      200,
      'Bundle',
    )
    expect(batch.type).toBe('batch-response')
    const reconciled = conforms(
      await post('Patient/$reconcile-medications', {
        resourceType: 'Bundle',
        type: 'collection',
        entry: [
          { resource: { resourceType: 'Patient', id: 'p' } },
          {
            resource: {
              resourceType: 'MedicationRequest',
              id: 'm',
              status: 'active',
              intent: 'order',
              subject: { reference: 'Patient/p' },
              authoredOn: '2026-10-01',
              medicationCodeableConcept: { coding: [{ system: RXNORM, code: '314076' }], text: 'lisinopril' },
            },
          },
        ],
      }),
      200,
      'Bundle',
    )
    expect(reconciled.entry.map((entry: any) => entry.resource.resourceType)).toEqual([
      'MedicationRequest',
      'Provenance',
      'OperationOutcome',
    ])
  })

  it('every InsurancePlan built from the CMS files conforms to Plan-Net 1.2.0 and says so', async () => {
    const profile = profileFixture('plan-net-profiles/StructureDefinition-plannet-InsurancePlan.json')
    const ids = new Set<string>()
    for (const state of ['FL', 'TX', 'AZ', 'RI', 'WA', 'NY', 'CA']) {
      const page = (await get(`InsurancePlan?state=${state}&_count=50`)).json
      for (const entry of page.entry ?? []) ids.add(entry.resource.id)
    }
    expect(ids.size).toBeGreaterThan(5)
    expect([...ids].some((id) => id.startsWith('H'))).toBe(true)
    expect([...ids].some((id) => !id.startsWith('H'))).toBe(true)
    for (const id of ids) {
      const plan = (await get(`InsurancePlan/${id}`)).json
      expect(plan.meta.profile).toContain(`${profile.url}|${profile.version}`)
      expectValidR4(plan, profile)
    }
  })

  it('the OperationOutcome of every error status the base answers', async () => {
    const outcome = (response: TestResponse, status: number) => conforms(response, status, 'OperationOutcome')
    outcome(await get('Practitioner?colour=blue'), 400)
    outcome(await t.get(`${BASE}/metadata`), 401)
    outcome(await get('Practitioner/nope'), 404)
    outcome(await t.send('DELETE', `${BASE}/metadata`, { headers: bearer(t.key) }), 405)
    outcome(await get('metadata?_format=xml'), 406)
    outcome(await post('', 'x'.repeat(1024 * 1024 + 1)), 413)
    outcome(await post('', '{}', { 'content-type': 'text/plain' }), 415)
    outcome(await get('CodeSystem/$lookup?system=http://snomed.info/sct&code=1'), 503)

    // 410: a cursor made before the plans it pages through were replaced.
    const first = (await get('InsurancePlan?state=FL&_count=1')).json
    const next = new URL(first.link.find((link: any) => link.relation === 'next').url)
    await importPlans(t.server.db, ACA_FILES, { now: t.now, release: 'aca-2025-again' })
    outcome(await t.get(next.pathname + next.search, bearer(t.key)), 410)

    // 429: past a Developer plan's 60 requests a minute.
    let limited: TestResponse | undefined
    for (let sent = 0; sent < 61 && !limited; sent++) {
      const response = await t.get(`${BASE}/metadata`, bearer(developerKey))
      if (response.status === 429) limited = response
    }
    outcome(limited as TestResponse, 429)

    // 431: a head over 16 KiB, refused before the request is routed.
    const head = await rawRequest(t.url, 'GET', `${BASE}/metadata?x=${'a'.repeat(17 * 1024)}`)
    expect(head.status).toBe(431)
    expectValidR4(head.json)

    // 502, 503 and 504 from a remote directory that fails, rate limits or does not answer.
    fake.script(
      (_req, res) => res.writeHead(500).end(),
      (_req, res) => res.writeHead(500).end(),
    )
    outcome(await get('Endpoint?organization=abc', remote), 502)
    fake.reset()
    const throttled = json(429, {}, { 'retry-after': '30' })
    fake.script(throttled, throttled)
    outcome(await get('Endpoint?organization=abc', remote), 503)
    fake.reset()
    fake.script(hang, hang)
    outcome(await get('Endpoint?organization=abc', remote), 504)
  })
})
