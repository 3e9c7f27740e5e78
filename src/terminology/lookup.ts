import type { EndpointResponse } from '../api/endpoint.js'
import type { Terminology } from './terminology.js'
import type { Coding } from '../api/params.js'
import { ApiError } from '../http/errors.js'
import { type Parameters, type ParametersParameter, parameters, valued } from './parameters.js'
import { forward, query } from './remote.js'
import type { RememberedConcept } from './remembered.js'
import { resolveCodeSystem } from './sources.js'
import { type CodeSystemRow, type ConceptRow, releasesUnchanged } from './store.js'

export interface LookupInput {
  system?: string
  code?: string
  version?: string
  coding?: Coding
  property?: string[]
}

/** Properties every code system answers, beside the ones it declares. */
const STANDARD_PROPERTIES = ['parent', 'child', 'definition', 'designation', 'display', 'inactive']

/** The coding asked about, from `system` + `code` or from `coding`; the endpoint rules made one present. */
export function askedCoding(input: LookupInput): { system: string; code: string; version?: string } {
  if (input.coding) {
    return {
      system: input.coding.system as string,
      code: input.coding.code,
      version: input.coding.version ?? input.version,
    }
  }
  return { system: input.system as string, code: input.code as string, version: input.version }
}

function propertyParts(code: string, type: string, value: unknown): ParametersParameter {
  return {
    name: 'property',
    part: [
      { name: 'code', valueCode: code },
      { name: 'value', [`value${type}`]: value },
    ],
  }
}

function designationParameters(concept: ConceptRow): ParametersParameter[] {
  return (concept.designations ?? []).map((raw) => {
    const designation = raw as { language?: string; use?: unknown; value?: string }
    return {
      name: 'designation',
      part: [
        ...valued('language', 'Code', designation.language),
        ...valued('use', 'Coding', designation.use),
        ...valued('value', 'String', designation.value),
      ],
    }
  })
}

function requestedProperties(remembered: RememberedConcept, wanted: string[]) {
  const { concept } = remembered
  const out: ParametersParameter[] = []
  for (const name of wanted) {
    switch (name) {
      case 'parent':
        for (const parent of remembered.parents) out.push(propertyParts(name, 'Code', parent))
        break
      case 'child':
        for (const child of remembered.children) out.push(propertyParts(name, 'Code', child))
        break
      case 'definition':
        if (concept.definition !== null) out.push(propertyParts(name, 'String', concept.definition))
        break
      case 'display':
        out.push(propertyParts(name, 'String', concept.display ?? concept.code))
        break
      case 'inactive':
        out.push(propertyParts(name, 'Boolean', concept.status !== 'active'))
        break
      case 'designation':
        out.push(...designationParameters(concept))
        break
      default:
        for (const value of remembered.properties)
          if (value.property === name) out.push(propertyParts(name, value.type, value.value))
    }
  }
  return out
}

/** Property names a code system answers, by its declarations (shared by every row read with the same ones). */
const knownProperties = new WeakMap<CodeSystemRow['properties'], Set<string>>()

/** Unknown property names are refused, naming the ones this code system has. */
function checkProperties(system: CodeSystemRow, wanted: string[]): void {
  let known = knownProperties.get(system.properties)
  if (!known) {
    known = new Set([...STANDARD_PROPERTIES, ...system.properties.map((p) => p.code)])
    knownProperties.set(system.properties, known)
  }
  const unknown = wanted.filter((name) => !known.has(name))
  if (unknown.length === 0) return
  throw ApiError.invalid(
    unknown.map((name) => ({
      path: ['property'],
      message: `Code system ${system.url} has no property "${name}"; it has ${[...known].join(', ')}`,
    })),
  )
}

export function lookupLocal(
  terminology: Terminology,
  system: CodeSystemRow,
  code: string,
  wanted: string[],
  codeParameter: string,
): Parameters {
  checkProperties(system, wanted)
  const remembered = terminology.releases.concept(system, code)
  if (!remembered) {
    throw new ApiError(404, {
      detail: `Code "${code}" is not in ${system.url} (release ${system.version}).`,
      issues: [{ path: [codeParameter], message: `Unknown code "${code}" in ${system.url}` }],
    })
  }
  return remembered.answer(JSON.stringify(wanted), () => lookupAnswer(system, remembered, wanted))
}

function lookupAnswer(system: CodeSystemRow, remembered: RememberedConcept, wanted: string[]): Parameters {
  const { concept } = remembered
  return parameters([
    { name: 'code', valueCode: concept.code },
    { name: 'system', valueString: system.url },
    { name: 'name', valueString: system.title ?? system.name ?? system.url },
    { name: 'version', valueString: system.version },
    { name: 'display', valueString: concept.display ?? concept.code },
    { name: 'status', valueCode: concept.status },
    ...(concept.abstract ? [{ name: 'abstract', valueBoolean: true }] : []),
    ...requestedProperties(remembered, wanted),
  ])
}

/** CodeSystem/$lookup: from the store (answered at once), or forwarded to the system's own source. */
export function lookup(
  terminology: Terminology,
  input: LookupInput,
  signal: AbortSignal,
): EndpointResponse | Promise<EndpointResponse> {
  const asked = askedCoding(input)
  const codeParameter = input.coding ? 'coding' : 'code'
  const resolved = resolveCodeSystem(
    terminology,
    asked.system,
    asked.version,
    input.coding ? 'coding' : 'system',
  )
  const wanted = input.property ?? []
  if (resolved.kind === 'local') {
    // From the store alone: the same question is answered the same until the database changes.
    return {
      body: lookupLocal(terminology, resolved.system, asked.code, wanted, codeParameter),
      reuse: { stillTrue: releasesUnchanged(terminology.db) },
    }
  }
  const search = query([
    ['system', asked.system],
    ['code', asked.code],
    ['version', asked.version],
    ...wanted.map((name): [string, string] => ['property', name]),
  ])
  return forward(resolved.source, { path: `CodeSystem/$lookup?${search}`, signal }, 'Parameters')
}
