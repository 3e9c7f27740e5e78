import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { normalizeNdc } from '../src/medlist/codes.js'
import { expectValidR4 } from './support/fhirValidator.js'
import { MEDLIST } from './support/fixtures.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const PATH = '/v1/fhir/r4/Patient/$reconcile-medications'
const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm'
const NDC = 'http://hl7.org/fhir/sid/ndc'
const DAY = 86_400_000

let t: TestServer
const reconcile = (body: unknown, query = '', headers: Record<string, string> = {}) =>
  t.postFhir(`${PATH}${query}`, body, headers)

const excerpt = () =>
  JSON.parse(
    readFileSync(join(MEDLIST, 'multi-source', 'inferno--pdex_bundle_patient_999.meds-excerpt.json'), 'utf8'),
  )

const requests = (bundle: any) =>
  bundle.entry
    .filter((entry: any) => entry.resource.resourceType === 'MedicationRequest')
    .map((e: any) => e.resource)
const outcomeOf = (bundle: any) => bundle.entry.at(-1).resource
const provenanceOf = (bundle: any, request: any) => {
  const at = bundle.entry.findIndex((entry: any) => entry.resource === request)
  return bundle.entry[at + 1].resource
}

const iso = (offsetDays: number) => new Date(t.now() + offsetDays * DAY).toISOString()
const rx = (code: string, text: string) => ({ coding: [{ system: RXNORM, code, display: text }], text })
const patient = { resourceType: 'Patient', id: 'p1' }
const subject = { reference: 'Patient/p1' }
const bundleOf = (...resources: any[]) => ({
  resourceType: 'Bundle',
  type: 'collection',
  entry: resources.map((resource) => ({
    fullUrl: `urn:uuid:${resource.resourceType}-${resource.id}`,
    resource,
  })),
})

beforeAll(async () => {
  t = await startTestServer({
    plan: 'scale',
    env: { SVC_MEDLIST_ORGANIZATION: 'Example Health reconciliation' },
  })
}, 60_000)
afterAll(() => t.close())

describe('$reconcile-medications on real records', () => {
  it('merges a request by medicationReference and a dispense coded only by NDC into one US Core MedicationRequest with its Provenance', async () => {
    const response = await reconcile(excerpt())
    expect(response.status).toBe(200)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['content-type']).toMatch(/application\/fhir\+json/)
    const bundle = response.json
    expectValidR4(bundle)
    expect(bundle.type).toBe('collection')
    const [request, ...others] = requests(bundle)
    expect(others).toHaveLength(0)
    expect(request.meta.profile).toEqual([
      'http://hl7.org/fhir/us/core/StructureDefinition/us-core-medicationrequest|6.1.0',
    ])
    expect(request.medicationCodeableConcept.coding.map((c: any) => [c.system, c.code])).toEqual([
      [RXNORM, '311036'],
      [NDC, '0002-8215-01'],
    ])
    expect(request.status).toBe('active')
    // The dispense backs it: an order, not reported use.
    expect(request.intent).toBe('order')
    expect(request.reportedBoolean).toBeUndefined()
    expect(request.subject).toEqual({ reference: 'Patient/999' })
    expect(request.dosageInstruction[0].text).toBeDefined()
    const provenance = provenanceOf(bundle, request)
    expect(provenance.resourceType).toBe('Provenance')
    expect(provenance.target).toEqual([{ reference: bundle.entry[0].fullUrl }])
    expect(provenance.entity.map((entity: any) => entity.what.reference).sort()).toEqual([
      'urn:uuid:57b5a505-f4e0-4712-ac8f-b3d4ced3eb25',
      'urn:uuid:a882f56d-73fc-4ade-9c7e-90bdb0006388',
    ])
    expect(provenance.agent.map((agent: any) => agent.type.coding[0].code)).toEqual(['author', 'transmitter'])
    expect(provenance.contained[0].name).toBe('Example Health reconciliation')
  })

  it('ignores what is not a medication record, counting each type, in the whole PDex patient bundle', async () => {
    const whole = JSON.parse(
      readFileSync(join(MEDLIST, 'multi-source', 'inferno--pdex_bundle_patient_999.json'), 'utf8'),
    )
    const bundle = (await reconcile(whole)).json
    expect(requests(bundle)).toHaveLength(1)
    const texts = outcomeOf(bundle).issue.map((issue: any) => issue.diagnostics)
    expect(texts).toContain('Provenance: 1 records ignored')
    expect(texts).toContain('Encounter: 1 records ignored')
  })

  it("reconciles a Synthea patient's 447 orders into valid US Core MedicationRequests, one per medication", async () => {
    const who = 'Patient/129c6ac7-8d06-89de-ad63-0204a93e76c3'
    const orders = readFileSync(join(MEDLIST, 'synthea-10', 'MedicationRequest.ndjson'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((order) => order.subject.reference === who)
    const bundle = (
      await reconcile({
        resourceType: 'Bundle',
        type: 'collection',
        entry: orders.map((resource) => ({ resource })),
      })
    ).json
    expectValidR4(bundle)
    const made = requests(bundle)
    const codes = new Set(orders.map((order) => order.medicationCodeableConcept.coding[0].code))
    expect(made).toHaveLength(codes.size)
    for (const request of made) {
      const provenance = provenanceOf(bundle, request)
      const code = request.medicationCodeableConcept.coding[0].code
      expect(provenance.entity).toHaveLength(
        orders.filter((o) => o.medicationCodeableConcept.coding[0].code === code).length,
      )
      expect(provenance.entity[0].what.reference).toMatch(/^MedicationRequest\//)
      // US Core's must-support elements the orders hold: those of the latest order.
      const latest = orders
        .filter((o) => o.medicationCodeableConcept.coding[0].code === code)
        .sort((a, b) => b.authoredOn.localeCompare(a.authoredOn))[0]
      expect(request.encounter).toEqual(latest.encounter)
      expect(request.requester).toEqual(latest.requester)
      expect(request.authoredOn).toBe(latest.authoredOn)
    }
  })

  it('gives the same ids for the same input; only the Bundle id and timestamp and Provenance.recorded change', async () => {
    const first = (await reconcile(excerpt())).json
    t.setNow(t.now() + 60_000)
    const second = (await reconcile(excerpt())).json
    const strip = (bundle: any) =>
      bundle.entry.map((entry: any) =>
        entry.resource.resourceType === 'Provenance'
          ? { ...entry, resource: { ...entry.resource, recorded: null } }
          : entry,
      )
    expect(strip(second)).toEqual(strip(first))
    expect(second.id).not.toBe(first.id)
    expect(second.timestamp).not.toBe(first.timestamp)
  })
})

describe('the reconciliation rules', () => {
  it('normalises NDCs: 4-4-2, 5-3-2, 5-4-1 and 5-4-2 to 11 digits', () => {
    expect(normalizeNdc('0002-8215-01')).toBe('00002821501')
    expect(normalizeNdc('50580-506-02')).toBe('50580050602')
    expect(normalizeNdc('12345-6789-1')).toBe('12345678901')
    expect(normalizeNdc('00002-8215-01')).toBe('00002821501')
    expect(normalizeNdc('00002821501')).toBe('00002821501')
    expect(normalizeNdc('0002821501')).toBeUndefined()
  })

  it('applies each rule: codes, NDC forms, text, strengths kept apart, statuses by date, not-taken records, other systems', async () => {
    const furosemideTablet = rx('313988', 'Furosemide 40 MG Oral Tablet')
    const furosemideInjection = rx('1719286', 'furosemide 10 MG/ML Injectable Solution')
    const records = [
      patient,
      // Rule 1: the same NDC in two forms is one medication.
      {
        resourceType: 'MedicationDispense',
        id: 'd1',
        status: 'completed',
        subject,
        whenHandedOver: iso(-10),
        daysSupply: { value: 30 },
        medicationCodeableConcept: { coding: [{ system: NDC, code: '0002-8215-01' }], text: 'Humulin R' },
      },
      {
        resourceType: 'MedicationDispense',
        id: 'd2',
        status: 'completed',
        subject,
        whenHandedOver: iso(-100),
        daysSupply: { value: 30 },
        medicationCodeableConcept: { coding: [{ system: NDC, code: '00002821501' }], text: 'Humulin R' },
      },
      // Different strengths and forms stay apart.
      {
        resourceType: 'MedicationRequest',
        id: 'r1',
        status: 'active',
        intent: 'order',
        subject,
        authoredOn: iso(-5),
        requester: { display: 'Dr A' },
        medicationCodeableConcept: furosemideTablet,
      },
      {
        resourceType: 'MedicationAdministration',
        id: 'a1',
        status: 'completed',
        subject,
        effectiveDateTime: iso(-3),
        medicationCodeableConcept: furosemideInjection,
      },
      // Rule 2: a later order stopping what an earlier statement said was active.
      {
        resourceType: 'MedicationStatement',
        id: 's1',
        status: 'active',
        subject,
        effectiveDateTime: iso(-60),
        medicationCodeableConcept: rx('197361', 'Amlodipine 5 MG Oral Tablet'),
      },
      {
        resourceType: 'MedicationRequest',
        id: 'r2',
        status: 'stopped',
        intent: 'order',
        subject,
        authoredOn: iso(-20),
        medicationCodeableConcept: rx('197361', 'Amlodipine 5 MG Oral Tablet'),
      },
      // An active order whose validity ended, and nothing current: completed.
      {
        resourceType: 'MedicationRequest',
        id: 'r3',
        status: 'active',
        intent: 'order',
        subject,
        authoredOn: iso(-400),
        dispenseRequest: { validityPeriod: { start: iso(-400), end: iso(-35) } },
        medicationCodeableConcept: rx('310965', 'Ibuprofen 200 MG Oral Tablet'),
      },
      // An administration 20 days ago: completed.
      {
        resourceType: 'MedicationAdministration',
        id: 'a2',
        status: 'completed',
        subject,
        effectiveDateTime: iso(-20),
        medicationCodeableConcept: rx('308182', 'Amoxicillin 250 MG Oral Capsule'),
      },
      // Only records saying it was not taken: no MedicationRequest, listed.
      {
        resourceType: 'MedicationRequest',
        id: 'r4',
        status: 'active',
        intent: 'order',
        doNotPerform: true,
        subject,
        authoredOn: iso(-2),
        medicationCodeableConcept: rx('1049621', 'Oxycodone 5 MG Oral Tablet'),
      },
      {
        resourceType: 'MedicationDispense',
        id: 'd3',
        status: 'declined',
        subject,
        medicationCodeableConcept: rx('1049621', 'Oxycodone 5 MG Oral Tablet'),
      },
      // Rule 3: coded only in SNOMED CT: its own item, never dropped. Reported use: plan.
      {
        resourceType: 'MedicationStatement',
        id: 's2',
        status: 'active',
        subject,
        effectiveDateTime: iso(-1),
        medicationCodeableConcept: {
          coding: [{ system: 'http://snomed.info/sct', code: '108979001' }],
          text: 'Vitamin D preparation',
        },
      },
      // Text alone joins a record with no code to a coded one.
      {
        resourceType: 'MedicationStatement',
        id: 's3',
        status: 'active',
        subject,
        effectiveDateTime: iso(-1),
        medicationCodeableConcept: { text: 'furosemide 40 mg oral tablet' },
      },
      // An unresolved reference is a warning, not a failure.
      {
        resourceType: 'MedicationStatement',
        id: 's4',
        status: 'active',
        subject,
        medicationReference: { reference: 'Medication/missing', display: 'Metformin 500 MG' },
      },
    ]
    const response = await reconcile(bundleOf(...records))
    expect(response.status).toBe(200)
    const bundle = response.json
    expectValidR4(bundle)
    const byText = new Map(
      requests(bundle).map((request: any) => [request.medicationCodeableConcept.text, request]),
    )
    const find = (pattern: RegExp) =>
      [...byText.entries()].filter(([text]) => pattern.test(String(text))).map(([, r]) => r as any)
    expect(find(/Humulin/)).toHaveLength(1)
    expect(find(/Humulin/)[0].status).toBe('active')
    expect(provenanceOf(bundle, find(/Humulin/)[0]).entity).toHaveLength(2)
    const furosemide = find(/furosemide/i)
    expect(furosemide).toHaveLength(2)
    const tablet = furosemide.find((r) => r.medicationCodeableConcept.coding[0]?.code === '313988')
    expect(tablet.status).toBe('active')
    expect(tablet.intent).toBe('order')
    expect(tablet.requester).toEqual({ display: 'Dr A' })
    expect(provenanceOf(bundle, tablet).entity).toHaveLength(2)
    expect(furosemide.find((r) => r.medicationCodeableConcept.coding[0]?.code === '1719286').status).toBe(
      'active',
    )
    expect(find(/Amlodipine/)[0].status).toBe('stopped')
    expect(find(/Ibuprofen/)[0].status).toBe('completed')
    expect(find(/Amoxicillin/)[0].status).toBe('completed')
    expect(find(/Oxycodone/)).toHaveLength(0)
    const vitamin = find(/Vitamin D/)[0]
    expect(vitamin.medicationCodeableConcept.coding).toEqual([
      { system: 'http://snomed.info/sct', code: '108979001' },
    ])
    expect(vitamin.intent).toBe('plan')
    expect(vitamin.reportedBoolean).toBe(true)
    expect(find(/Metformin/)).toHaveLength(1)
    const issues = outcomeOf(bundle).issue
    const about = (code: string) => issues.filter((issue: any) => issue.code === code)
    expect(about('conflict')[0].expression).toEqual(['Bundle.entry[6].resource', 'Bundle.entry[5].resource'])
    expect(about('not-found')[0].expression).toEqual(['Bundle.entry[13].resource.medicationReference'])
    expect(issues.find((issue: any) => /not taken/.test(issue.diagnostics)).expression).toEqual([
      'Bundle.entry[9].resource',
      'Bundle.entry[10].resource',
    ])
  })

  it('takes a Parameters of record parameters as well as a Bundle', async () => {
    const bundle = excerpt()
    const parameters = {
      resourceType: 'Parameters',
      parameter: bundle.entry.map((entry: any) => ({ name: 'record', resource: entry.resource })),
    }
    const response = await reconcile(parameters)
    expect(response.status).toBe(200)
    const [request] = requests(response.json)
    expect(
      provenanceOf(response.json, request)
        .entity.map((e: any) => e.what.reference)
        .sort(),
    ).toEqual(['MedicationDispense/pdex-MedicationDispense', 'MedicationRequest/pdex-MedicationRequest'])
  })
})

describe('refusals, limits and privacy', () => {
  it("refuses records of more than one patient, naming the subjects' paths and never their values", async () => {
    const other = {
      resourceType: 'MedicationStatement',
      id: 'x',
      status: 'active',
      subject: { reference: 'Patient/secret-other' },
      medicationCodeableConcept: rx('197361', 'Amlodipine'),
    }
    const mine = { ...other, id: 'y', subject }
    const response = await reconcile(bundleOf(patient, mine, other))
    expect(response.status).toBe(400)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.json.issue.map((issue: any) => issue.expression[0])).toEqual([
      'Bundle.entry[0].resource',
      'Bundle.entry[2].resource.subject',
    ])
    expect(response.text).not.toContain('secret-other')
    expect(response.text).not.toContain('p1')
  })

  it('takes no query parameter, not even _format, and refuses anything but a Bundle or Parameters', async () => {
    const query = await reconcile(excerpt(), '?_format=json&foo=1')
    expect(query.status).toBe(400)
    expect(query.json.issue.map((issue: any) => issue.expression[0]).sort()).toEqual(['_format', 'foo'])
    const patientOnly = await reconcile({ resourceType: 'Patient', id: 'p' })
    expect(patientOnly.status).toBe(400)
    const broken = await reconcile('{"resourceType": "Bundle", "entry": [ SECRET-MARK')
    expect(broken.status).toBe(400)
    expect(broken.text).not.toContain('SECRET-MARK')
    expect(broken.headers['cache-control']).toBe('no-store')
    const noKey = await t.send('POST', PATH, {
      headers: { 'content-type': 'application/fhir+json' },
      body: '{}',
    })
    expect(noKey.status).toBe(401)
    expect(noKey.headers['cache-control']).toBe('no-store')
  })

  it("says no-store on every answer of its path, another method's refusal and OPTIONS included", async () => {
    const auth = { authorization: `Bearer ${t.key}` }
    for (const [method, status] of [
      ['GET', 405],
      ['HEAD', 405],
      ['OPTIONS', 204],
    ] as const) {
      const response = await t.send(method, PATH, { headers: auth })
      expect([method, response.status, response.headers['cache-control']]).toEqual([
        method,
        status,
        'no-store',
      ])
    }
    const keyless = await t.send('GET', PATH)
    expect([keyless.status, keyless.headers['cache-control']]).toEqual([401, 'no-store'])
    // Another path's refusal stays cacheable as before.
    const other = await t.send('POST', '/v1/fhir/r4/metadata', { headers: auth })
    expect(other.status).toBe(405)
    expect(other.headers['cache-control']).toBeUndefined()
  })

  it('refuses a body over 16 MiB (413) and over 50,000 records (400 too-long), and is refused inside a batch', async () => {
    const big = await reconcile(
      `{"resourceType":"Bundle","type":"collection","entry":[],"pad":"${'x'.repeat(16 * 1024 * 1024)}"}`,
    )
    expect(big.status).toBe(413)
    expect(big.json.issue[0].code).toBe('too-long')
    expect(big.headers['cache-control']).toBe('no-store')
    const many = await reconcile({
      resourceType: 'Bundle',
      type: 'collection',
      entry: Array.from({ length: 50_001 }, () => ({ resource: patient })),
    })
    expect(many.status).toBe(400)
    expect(many.json.issue[0].code).toBe('too-long')
    const batch = await t.send('POST', '/v1/fhir/r4', {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Bundle',
        type: 'batch',
        entry: [{ request: { method: 'POST', url: 'Patient/$reconcile-medications' }, resource: excerpt() }],
      }),
    })
    expect(batch.json.entry[0].response.status).toMatch(/^400/)
    expect(JSON.stringify(batch.json.entry[0])).toContain('$reconcile-medications')
  })

  it('writes nothing of the body anywhere: a marker in the input is in no file of the store', async () => {
    const marker = 'MARKER-7f3c9a1e-PRIVATE'
    const bundle = excerpt()
    bundle.entry[1].resource.note = [{ text: marker }]
    bundle.entry[0].resource.name = [{ family: marker }]
    expect((await reconcile(bundle)).status).toBe(200)
    await reconcile(`{"resourceType":"Bundle","entry":[${marker}`)
    await t.server.flush()
    for (const name of readdirSync(t.dir)) {
      const file = join(t.dir, name)
      if (!statSync(file).isFile()) continue
      expect(readFileSync(file).includes(marker), name).toBe(false)
    }
  })
})
