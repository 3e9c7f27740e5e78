import { z } from 'zod'
import type { CodeSystemRelease, ConceptRecord, PropertyValue, ValueSetRecord } from './model.js'

const VALUE_KEY = /^value([A-Z][A-Za-z]*)$/

const ConceptSchema: z.ZodType<FhirConcept> = z.lazy(() =>
  z.looseObject({
    code: z.string().min(1, 'concept.code must be a non-empty string'),
    display: z.string().optional(),
    definition: z.string().optional(),
    designation: z.array(z.unknown()).optional(),
    property: z.array(z.looseObject({ code: z.string().min(1) })).optional(),
    concept: z.array(ConceptSchema).optional(),
  }),
)

interface FhirConcept {
  code: string
  display?: string
  definition?: string
  designation?: unknown[]
  property?: ({ code: string } & Record<string, unknown>)[]
  concept?: FhirConcept[]
}

/** What a CodeSystem and a ValueSet both carry as canonical resources. */
const canonicalMembers = <T extends string>(resourceType: T) => ({
  resourceType: z.literal(resourceType),
  url: z.string().min(1, `${resourceType}.url is required`),
  version: z.string().min(1).optional(),
  name: z.string().optional(),
  title: z.string().optional(),
  status: z.string().default('unknown'),
})

const CodeSystemSchema = z.looseObject({
  ...canonicalMembers('CodeSystem'),
  content: z.string().default('complete'),
  property: z
    .array(
      z.looseObject({
        code: z.string().min(1),
        type: z.string().optional(),
        description: z.string().optional(),
        uri: z.string().optional(),
      }),
    )
    .default([]),
  concept: z.array(ConceptSchema).default([]),
})

const ValueSetSchema = z.looseObject({
  ...canonicalMembers('ValueSet'),
  compose: z
    .looseObject({
      include: z.array(z.looseObject({})).min(1, 'ValueSet.compose.include needs an item'),
      exclude: z.array(z.looseObject({})).optional(),
    })
    .optional(),
})

export type Converted =
  | { kind: 'code-system'; release: CodeSystemRelease }
  | { kind: 'value-set'; valueSet: ValueSetRecord }
  | { kind: 'skipped'; reason: string }
  | { kind: 'bad'; message: string }

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'invalid resource'
  const path = issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
  return `${path}${issue.message}`
}

function propertyValue(property: { code: string } & Record<string, unknown>): PropertyValue | undefined {
  for (const [key, value] of Object.entries(property)) {
    const type = VALUE_KEY.exec(key)?.[1]
    if (type) return { property: property.code, type, value }
  }
  return undefined
}

/** Concept status from the standard properties: status, inactive, deprecated/retired codes. */
function conceptStatus(properties: PropertyValue[]): string {
  for (const { property, value } of properties) {
    if (property === 'status' && typeof value === 'string') return value
    if (property === 'inactive' && value === true) return 'inactive'
  }
  return 'active'
}

function flatten(
  concepts: FhirConcept[],
  parent: string | undefined,
  into: Map<string, ConceptRecord>,
): void {
  for (const concept of concepts) {
    const properties = (concept.property ?? [])
      .map(propertyValue)
      .filter((value): value is PropertyValue => value !== undefined)
    const existing = into.get(concept.code)
    const record: ConceptRecord = existing ?? {
      code: concept.code,
      display: concept.display,
      definition: concept.definition,
      status: conceptStatus(properties),
      abstract: properties.some(
        (p) => (p.property === 'notSelectable' || p.property === 'abstract') && p.value === true,
      ),
      designations: concept.designation,
      properties,
      parents: [],
    }
    if (parent !== undefined && !record.parents.includes(parent)) record.parents.push(parent)
    for (const p of properties) {
      if ((p.property === 'parent' || p.property === 'subsumedBy') && typeof p.value === 'string') {
        if (!record.parents.includes(p.value)) record.parents.push(p.value)
      }
    }
    into.set(concept.code, record)
    flatten(concept.concept ?? [], concept.code, into)
  }
}

/** Parent links given as `child` properties point the other way; fold them into each child's parents. */
function addChildLinks(concepts: Map<string, ConceptRecord>): void {
  for (const concept of concepts.values()) {
    for (const p of concept.properties) {
      if (p.property !== 'child' || typeof p.value !== 'string') continue
      const child = concepts.get(p.value)
      if (child && !child.parents.includes(concept.code)) child.parents.push(concept.code)
    }
  }
}

/**
 * Converts one FHIR resource. `fallbackVersion` names the release when the resource carries no version
 * (the release date of the file it came from).
 */
export function fromFhirResource(resource: unknown, origin: string, fallbackVersion: string): Converted {
  const type = (resource as { resourceType?: unknown } | null)?.resourceType
  if (type === 'CodeSystem') {
    const parsed = CodeSystemSchema.safeParse(resource)
    if (!parsed.success) return { kind: 'bad', message: firstIssue(parsed.error) }
    const cs = parsed.data
    if (cs.content === 'not-present' || cs.content === 'supplement') {
      return { kind: 'skipped', reason: `CodeSystem ${cs.url} has content "${cs.content}": no codes to hold` }
    }
    const concepts = new Map<string, ConceptRecord>()
    flatten(cs.concept, undefined, concepts)
    addChildLinks(concepts)
    return {
      kind: 'code-system',
      release: {
        url: cs.url,
        version: cs.version ?? fallbackVersion,
        name: cs.name,
        title: cs.title,
        status: cs.status,
        content: cs.content,
        properties: cs.property.map(({ code, type, description, uri }) => ({ code, type, description, uri })),
        origin,
        concepts: [...concepts.values()],
      },
    }
  }
  if (type === 'ValueSet') {
    const parsed = ValueSetSchema.safeParse(resource)
    if (!parsed.success) return { kind: 'bad', message: firstIssue(parsed.error) }
    const vs = parsed.data
    return {
      kind: 'value-set',
      valueSet: {
        url: vs.url,
        version: vs.version ?? fallbackVersion,
        name: vs.name,
        title: vs.title,
        status: vs.status,
        compose: vs.compose,
        origin,
      },
    }
  }
  return {
    kind: 'bad',
    message: `expected a CodeSystem or ValueSet resource, got ${typeof type === 'string' ? type : 'no resourceType'}`,
  }
}
