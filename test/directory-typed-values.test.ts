import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { fixture, PLAN_NET } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/**
 * Publishers type values wrong (the Plan-Net sample writes 118 Organization identifiers as JSON numbers): the
 * bytes are served as published, every search finds what the publisher meant, and the import says so.
 */
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
}, 60_000)
afterAll(() => t.close())

const search = async (path: string) => {
  const response = await t.get(`/v1/fhir/r4/${path}`, bearer(t.key))
  expect(response.status, response.text).toBe(200)
  return response.json.entry?.map((entry: any) => entry.resource) ?? []
}

/** Records of each searched type with a number or a boolean where R4 has a string, one element each. */
const mistyped = [
  {
    resourceType: 'Practitioner',
    id: 'typed-1',
    identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: 1234567893 }],
    name: [{ family: 1066, given: [true] }],
    address: [{ city: 1812, state: 'MA' }],
  },
  {
    resourceType: 'Endpoint',
    id: 'typed-2',
    status: 'active',
    connectionType: {
      system: 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type',
      code: 'hl7-fhir-rest',
    },
    name: 2024,
    managingOrganization: { reference: 'Organization/typed-3' },
    payloadType: [{ text: 'any' }],
    address: 'https://example.org/fhir',
  },
  { resourceType: 'Organization', id: 'typed-3', name: 311, identifier: [{ value: 99 }] },
  {
    resourceType: 'HealthcareService',
    id: 'typed-4',
    name: 411,
    identifier: [{ system: 'urn:example', value: 7 }],
    specialty: [{ coding: [{ system: 'urn:example', code: 208 }] }],
  },
]

describe('values a publisher typed wrong', () => {
  it('are found by every search as the text they meant, served as published, and reported by the import', async () => {
    const extra = join(t.dir, 'Typed.ndjson')
    writeFileSync(extra, `${mistyped.map((resource) => JSON.stringify(resource)).join('\n')}\n`)
    const human = await runCli(['import', 'directory', PLAN_NET, extra, '--db', t.dbPath])
    expect(human.code, human.stderr).toBe(0)
    const organizations = join(PLAN_NET, 'Organization.ndjson')
    expect(human.stdout).toContain(
      // The sample's 118, and one of the records above.
      `Organization.identifier.value: 119 numbers where R4 has a string; first at ${organizations}:14`,
    )
    expect(human.stdout).toContain(
      `Practitioner.qualification.identifier.value: 4 numbers where R4 has a string; first at ${join(PLAN_NET, 'Practitioner.ndjson')}:98`,
    )
    expect(human.stdout).toContain(
      `Practitioner.name.given: 1 boolean where R4 has a string; first at ${extra}:1`,
    )

    // The organization of the issue: its identifier is the number 426637.
    const [found] = await search('Organization?identifier=http://i.made/this/up|426637')
    const published = fixture('Organization').find((org: any) =>
      org.identifier?.some((identifier: any) => identifier.value === 426637),
    )
    expect(found).toEqual(published)
    expect(found.identifier.find((i: any) => i.system === 'http://i.made/this/up').value).toBe(426637)

    // One search per token and string parameter over such a value.
    const ids = async (path: string) => (await search(path)).map((resource: any) => resource.id)
    expect(await ids('Practitioner?identifier=1234567893')).toEqual(['typed-1'])
    expect(await ids('Practitioner?family=1066')).toEqual(['typed-1'])
    expect(await ids('Practitioner?given=true')).toEqual(['typed-1'])
    expect(await ids('Practitioner?name=1066&address-city=1812')).toEqual(['typed-1'])
    expect(await ids('Endpoint?organization=typed-3&name=2024')).toEqual(['typed-2'])
    expect(await ids('Organization?name=311')).toEqual(['typed-3'])
    expect(await ids('Organization?identifier=99')).toEqual(['typed-3'])
    expect(await ids('HealthcareService?identifier=urn:example|7')).toEqual(['typed-4'])
    expect(await ids('HealthcareService?name=411')).toEqual(['typed-4'])
    expect(await ids('HealthcareService?specialty=urn:example|208')).toEqual(['typed-4'])
    const [served] = await search('Practitioner?identifier=1234567893')
    expect(served).toEqual(mistyped[0])
  })

  it('lists each element path once in --json with its count, JSON types and first file:line, unknown elements and unreadable values included', async () => {
    const odd = join(t.dir, 'Odd.ndjson')
    writeFileSync(
      odd,
      [
        { resourceType: 'Organization', id: 'odd-1', name: { text: 'an object' }, nickname: 'not R4' },
        { resourceType: 'Organization', id: 'odd-2', name: 'fine', alias: 'one alias, not a list' },
        { resourceType: 'Organization', id: 'odd-3', name: ['a', 'list'], nickname: 'again' },
      ]
        .map((resource) => JSON.stringify(resource))
        .join('\n'),
    )
    const result = await runCli(['import', 'directory', odd, '--db', join(t.dir, 'odd.db'), '--json'])
    expect(result.code, result.stderr).toBe(0)
    const faults = JSON.parse(result.stdout).typeFaults.map(({ text: _, ...fault }: any) => fault)
    expect(faults).toEqual([
      { path: 'Organization.alias', found: 'string', expected: 'array', count: 1, first: `${odd}:2` },
      { path: 'Organization.name', found: 'array', expected: 'string', count: 1, first: `${odd}:3` },
      { path: 'Organization.name', found: 'object', expected: 'string', count: 1, first: `${odd}:1` },
      { path: 'Organization.nickname', found: 'string', count: 2, first: `${odd}:1` },
    ])
    const human = await runCli(['import', 'directory', odd, '--db', join(t.dir, 'odd2.db')])
    expect(human.stdout).toContain(
      `Organization.nickname: 2 strings in an element R4 does not define; first at ${odd}:1`,
    )
    expect(human.stdout).toContain(`Organization.name: 1 object where R4 has a string; first at ${odd}:1`)
  })
})
