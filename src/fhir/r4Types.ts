import { type R4JsonTypes, shippedR4JsonTypes } from './r4JsonTypes.js'

/** How a JSON value is written: what a report says was found, or what R4 wants. */
export type JsonKind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null'

/** One value whose JSON type is not the one R4 has for its element, or an element R4 does not have. */
export interface TypeFault {
  /** `Organization.identifier.value`: the element's path, without array positions. */
  path: string
  found: JsonKind
  /** What R4 has there; undefined for an element R4 does not define. */
  expected?: JsonKind
}

interface Field {
  array: boolean
  /** The definition it is of. */
  type: string
}

const kindOf = (value: unknown): JsonKind =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : (typeof value as JsonKind)

/**
 * The R4 type system as JSON sees it (src/fhir/r4JsonTypes.ts): per resource and data type, each element's
 * JSON kind and whether it repeats (choice elements spelled out, `valueString`, `valueBoolean`...). It
 * checks a resource in one walk (a full validator checks far more and is about 200 times slower): a value
 * of another JSON type than R4's for its element (a number where R4 has a string), a repeating element
 * given once or the other way round, and an element R4 does not define. Primitive extensions (`_name`)
 * are not walked.
 */
export class R4Types {
  readonly #fields = new Map<string, Map<string, Field>>()
  readonly #primitives = new Map<string, JsonKind>()
  readonly #checkers = new Map<string, Checker>()

  constructor(table: R4JsonTypes = shippedR4JsonTypes()) {
    for (const [name, fields] of Object.entries(table.fields))
      this.#fields.set(
        name,
        new Map(Object.entries(fields).map(([key, [type, array]]) => [key, { type, array: array === 1 }])),
      )
    for (const [name, json] of Object.entries(table.primitives)) this.#primitives.set(name, json)
  }

  /** Whether R4 defines the resource type. */
  isResource(type: string): boolean {
    return this.#fields.get(type)?.has('meta') === true && this.#fields.get(type)?.has('id') === true
  }

  /** Every fault of a resource, in document order. */
  check(resource: Record<string, unknown>, fault: (found: TypeFault) => void): void {
    const type = resource.resourceType
    if (typeof type !== 'string' || !this.isResource(type)) return
    // The path is kept as a stack of names and spelled out only for a fault: most resources have none.
    this.#checker(type)(resource, [type], fault)
  }

  #checker(type: string): Checker {
    let checker = this.#checkers.get(type)
    if (!checker) {
      checker = this.#compile(type)
      this.#checkers.set(type, checker)
    }
    return checker
  }

  /**
   * One function per type, written out as a switch over its element names (as ajv compiles a JSON schema):
   * a directory import checks every resource, and walking the fields through maps and closures cost three
   * times as much. Types it refers to are compiled when first met.
   */
  #compile(type: string): Checker {
    const fields = this.#fields.get(type) ?? new Map<string, Field>()
    const nested: Checker[] = []
    const names: string[] = []
    const item = (field: Field, value: string) => {
      const json = this.#primitives.get(field.type)
      if (json)
        return `if (typeof ${value} !== '${json}' || ${value} === null) bad(k, ${value}, '${json}', path, fault);`
      const walk = this.#fields.has(field.type)
        ? `nested[${names.push(field.type) - 1}](y, path, fault)`
        : 'resource(y, fault)'
      return `{ const y = ${value}; if (typeof y !== 'object' || y === null || Array.isArray(y)) bad(k, y, 'object', path, fault); else { path.push(k); ${walk}; path.pop() } }`
    }
    const cases = [...fields].map(([key, field]) => {
      const one = item(field, 'x')
      const expected = this.#primitives.get(field.type) ?? 'object'
      const body = field.array
        ? `if (!Array.isArray(x)) { bad(k, x, 'array', path, fault); ${one} } else for (let i = 0; i < x.length; i++) { ${item(field, 'x[i]')} }`
        : `if (Array.isArray(x)) bad(k, x, '${expected}', path, fault); else ${one}`
      return `case ${JSON.stringify(key)}: ${body} break;`
    })
    const source = `return function check(v, path, fault) {
      for (const k in v) {
        const x = v[k]
        switch (k) {
          ${cases.join('\n')}
          case 'resourceType': break;
          default: if (k.charCodeAt(0) !== 95) bad(k, x, undefined, path, fault);
        }
      }
    }`
    names.forEach((name, index) => {
      nested[index] = (value, path, fault) => {
        const compiled = this.#checker(name)
        nested[index] = compiled
        compiled(value, path, fault)
      }
    })
    const resource = (value: Record<string, unknown>, fault: (found: TypeFault) => void) =>
      this.check(value, fault)
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code is built from the R4 schema's names only
    return new Function('nested', 'bad', 'resource', source)(nested, reportFault, resource) as Checker
  }
}

type Checker = (value: Record<string, unknown>, path: string[], fault: (found: TypeFault) => void) => void

/** A fault of element `key` under `path`; `expected` undefined for an element R4 does not define. */
function reportFault(
  key: string,
  value: unknown,
  expected: JsonKind | undefined,
  path: readonly string[],
  fault: (found: TypeFault) => void,
): void {
  fault({ path: `${path.join('.')}.${key}`, found: kindOf(value), ...(expected ? { expected } : {}) })
}
