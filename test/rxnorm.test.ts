import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { oneLine, runCli, runCliJson } from './support/cli.js'
import { expectValidR4 } from './support/fhirValidator.js'
import { RXNORM_RELEASE } from './support/fixtures.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { zipOf } from './support/zip.js'

const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm'
const NDC = 'http://hl7.org/fhir/sid/ndc'
const PATH = '/v1/fhir/r4/Patient/$reconcile-medications'
const DAY = 86_400_000

let t: TestServer
const fhir = (path: string) => t.get(`/v1/fhir/r4/${path}`, bearer(t.key))
const post = (path: string, body: unknown) => t.postFhir(path, body)
const rrf = (name: string) => readFileSync(join(RXNORM_RELEASE, 'rrf', name), 'utf8')

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
}, 60_000)
afterAll(() => t.close())

const iso = (offsetDays: number) => new Date(t.now() + offsetDays * DAY).toISOString()
const subject = { reference: 'Patient/p1' }
/** One patient's furosemide and lisinopril, each drug named differently by each record. */
const records = () => ({
  resourceType: 'Bundle',
  type: 'collection',
  entry: [
    { resourceType: 'Patient', id: 'p1' },
    {
      resourceType: 'MedicationRequest',
      id: 'lasix',
      status: 'active',
      intent: 'order',
      subject,
      authoredOn: iso(-20),
      medicationCodeableConcept: {
        coding: [{ system: RXNORM, code: '200809', display: 'Lasix 40 MG Oral Tablet' }],
        text: 'Lasix 40 MG Oral Tablet',
      },
    },
    {
      resourceType: 'MedicationStatement',
      id: 'generic',
      status: 'active',
      subject,
      effectiveDateTime: iso(-2),
      medicationCodeableConcept: {
        coding: [{ system: RXNORM, code: '313988', display: 'furosemide 40 MG Oral Tablet' }],
      },
    },
    {
      resourceType: 'MedicationDispense',
      id: 'pharmacy',
      status: 'completed',
      subject,
      whenHandedOver: iso(-10),
      daysSupply: { value: 30, unit: 'days', system: 'http://unitsofmeasure.org', code: 'd' },
      medicationCodeableConcept: {
        coding: [{ system: NDC, code: '0054-4299-25' }],
        text: 'FUROSEMIDE 40MG TAB',
      },
    },
    {
      resourceType: 'MedicationAdministration',
      id: 'ward',
      status: 'completed',
      subject,
      effectiveDateTime: iso(-1),
      medicationCodeableConcept: {
        coding: [{ system: RXNORM, code: '1719286', display: 'furosemide 10 MG/ML Injectable Solution' }],
      },
    },
    {
      resourceType: 'MedicationRequest',
      id: 'zestril',
      status: 'active',
      intent: 'order',
      subject,
      authoredOn: iso(-30),
      medicationCodeableConcept: { coding: [{ system: RXNORM, code: '104377' }], text: 'Zestril 10 mg' },
    },
    {
      resourceType: 'MedicationStatement',
      id: 'lisinopril',
      status: 'active',
      subject,
      effectiveDateTime: iso(-3),
      medicationCodeableConcept: { coding: [{ system: RXNORM, code: '314076' }], text: 'lisinopril 10 mg' },
    },
  ].map((resource) => ({ fullUrl: `urn:uuid:${resource.id}`, resource })),
})

const medicationRequests = (bundle: any) =>
  bundle.entry.map((e: any) => e.resource).filter((r: any) => r.resourceType === 'MedicationRequest')
const sourcesOf = (bundle: any, request: any) => {
  const at = bundle.entry.findIndex((entry: any) => entry.resource === request)
  return bundle.entry[at + 1].resource.entity.map((entity: any) => entity.what.reference).sort()
}

describe('an RxNorm release', () => {
  it('is imported from its RRF folder, answers $lookup, $validate-code and TerminologyCapabilities, and feeds reconciliation', async () => {
    // Before any release: branded, generic and NDC-only records of one drug stay apart.
    const before = await post(PATH, records())
    expect(before.status).toBe(200)
    expect(medicationRequests(before.json)).toHaveLength(6)
    expect(JSON.stringify(before.json.entry.at(-1).resource)).toMatch(/No RxNorm release is imported/)

    const summary = await runCliJson(['import', 'terminology', RXNORM_RELEASE, '--db', t.dbPath])
    expect(summary.codeSystems).toEqual([{ url: RXNORM, version: '11032025', concepts: 20 }])
    expect(summary.bad).toEqual([])

    const lookup = await fhir(
      `CodeSystem/$lookup?system=${RXNORM}&code=200809&property=TTY&property=tradename_of&property=NDC&property=has_dose_form`,
    )
    expect(lookup.status).toBe(200)
    expectValidR4(lookup.json)
    const parameter = (name: string) => lookup.json.parameter.find((p: any) => p.name === name)
    expect(parameter('display').valueString).toBe('furosemide 40 MG Oral Tablet [Lasix]')
    expect(parameter('version').valueString).toBe('11032025')
    const properties = lookup.json.parameter
      .filter((p: any) => p.name === 'property')
      .map((p: any) => [p.part[0].valueCode, p.part[1].valueCode ?? p.part[1].valueString])
    expect(properties).toEqual([
      ['TTY', 'SBD'],
      ['tradename_of', '313988'],
      ['NDC', '00039006713'],
      ['has_dose_form', '317541'],
    ])
    // Only RxNorm's own atoms: another source's name for the concept is not its display.
    const scd = await fhir(`CodeSystem/$lookup?system=${RXNORM}&code=313988`)
    expect(scd.json.parameter.find((p: any) => p.name === 'display').valueString).toBe(
      'furosemide 40 MG Oral Tablet',
    )
    const obsolete = await fhir(`CodeSystem/$lookup?system=${RXNORM}&code=1000001`)
    expect(obsolete.json.parameter.find((p: any) => p.name === 'status').valueCode).toBe('inactive')

    const validate = (code: string) =>
      post('/v1/fhir/r4/CodeSystem/$validate-code', {
        resourceType: 'Parameters',
        parameter: [
          { name: 'url', valueUri: RXNORM },
          { name: 'code', valueCode: code },
        ],
      })
    const known = await validate('314076')
    expectValidR4(known.json)
    expect(known.json.parameter.find((p: any) => p.name === 'result').valueBoolean).toBe(true)
    const unknown = await validate('999999999')
    expect(unknown.json.parameter.find((p: any) => p.name === 'result').valueBoolean).toBe(false)

    const capabilities = await fhir('metadata?mode=terminology')
    expect(capabilities.json.codeSystem).toContainEqual({
      uri: RXNORM,
      version: [{ code: '11032025', isDefault: true }],
      subsumption: true,
    })
    expect(capabilities.json.description).not.toMatch(/RxNorm/)

    // With the release: the Lasix order, the generic statement and the NDC-only dispense are one drug.
    const after = await post(PATH, records())
    expect(after.status).toBe(200)
    expectValidR4(after.json)
    const list = medicationRequests(after.json)
    expect(list).toHaveLength(3)
    const tablet = list.find((r: any) =>
      r.medicationCodeableConcept.coding.some((c: any) => c.code === '313988'),
    )
    expect(sourcesOf(after.json, tablet)).toEqual(['urn:uuid:generic', 'urn:uuid:lasix', 'urn:uuid:pharmacy'])
    expect(tablet.medicationCodeableConcept.coding.map((c: any) => c.code)).toEqual([
      '200809',
      '313988',
      '0054-4299-25',
    ])
    expect(tablet.intent).toBe('order')
    expect(tablet.status).toBe('active')
    // A furosemide injection is another strength and dose form: kept apart, and the outcome says why.
    const injection = list.find((r: any) => r.medicationCodeableConcept.coding[0].code === '1719286')
    expect(sourcesOf(after.json, injection)).toEqual(['urn:uuid:ward'])
    const lisinopril = list.find((r: any) => r.medicationCodeableConcept.coding[0].code === '104377')
    expect(sourcesOf(after.json, lisinopril)).toEqual(['urn:uuid:lisinopril', 'urn:uuid:zestril'])
    const issues = after.json.entry.at(-1).resource.issue
    expect(issues.map((issue: any) => issue.diagnostics)).toContain(
      'Medications were matched with RxNorm release 11032025: branded drugs with their clinical drug, NDCs with their RxCUI.',
    )
    const shared = issues.find((issue: any) => /share the ingredient furosemide/.test(issue.diagnostics))
    expect(shared.severity).toBe('information')
    expect(shared.expression).toHaveLength(2)
    expect(issues.filter((issue: any) => /share the ingredient/.test(issue.diagnostics))).toHaveLength(1)
  })

  it('is read from the zip NLM publishes, without unpacking it, to the same release', async () => {
    const dir = join(t.dir, 'zipped')
    mkdirSync(dir)
    const zip = join(dir, 'RxNorm_full_prescribe_11032025.zip')
    writeFileSync(
      zip,
      zipOf({
        'Readme_full_prescribe_11032025.txt': 'RxNorm Current Prescribable Content\n',
        'rrf/RXNCONSO.RRF': rrf('RXNCONSO.RRF'),
        'rrf/RXNREL.RRF': rrf('RXNREL.RRF'),
        'rrf/RXNSAT.RRF': rrf('RXNSAT.RRF'),
      }),
    )
    const db = join(dir, 'zip.db')
    const summary = await runCliJson(['import', 'terminology', zip, '--db', db])
    expect(summary.codeSystems).toEqual([{ url: RXNORM, version: '11032025', concepts: 20 }])
  })

  it('reports each broken row with its file and line, and refuses a zip that is not an RxNorm release', async () => {
    const dir = join(t.dir, 'broken')
    cpSync(RXNORM_RELEASE, dir, { recursive: true })
    const conso = join(dir, 'rrf', 'RXNCONSO.RRF')
    writeFileSync(
      conso,
      `${rrf('RXNCONSO.RRF')}313988|ENG|cut short|\nabc|ENG||||||1|1|1||RXNORM|SCD|1|x||N|4096|\n`,
    )
    const db = join(dir, 'broken.db')
    const imported = await runCli(['import', 'terminology', dir, '--release', '2025-11', '--db', db])
    expect(imported.code).toBe(0)
    const lines = rrf('RXNCONSO.RRF').split('\n').length
    expect(imported.stderr).toContain(`${conso}:${lines}: has 4 fields; an RRF row of this file has 18`)
    expect(imported.stderr).toContain(`${conso}:${lines + 1}: RXCUI "abc" is not a number`)
    expect(imported.stdout).toContain(`code system ${RXNORM} release 2025-11: 20 codes`)

    const other = join(dir, 'other.zip')
    writeFileSync(other, zipOf({ 'readme.txt': 'not RxNorm' }))
    const refused = await runCli(['import', 'terminology', other, '--db', join(dir, 'other.db')])
    expect(refused.code).toBe(2)
    expect(oneLine(refused.stderr)).toContain('no RXNCONSO.RRF in the archive; not an RxNorm release')
  })
})
