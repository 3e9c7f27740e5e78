import type { JsonKind, TypeFault } from '../r4Types.js'

/** Values of one element found in one JSON type where R4 has another (or an element R4 does not have). */
export interface TypeFaultLine {
  path: string
  found: JsonKind
  /** Undefined for an element R4 does not define. */
  expected?: JsonKind
  count: number
  /** Where the first was: `file:line`. */
  first: string
  /** The line as the import reports it. */
  text: string
}

const withArticle = (kind: JsonKind) => `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`

function describeTypeFault(line: Omit<TypeFaultLine, 'text'>): string {
  const found = `${line.count} ${line.found}${line.count === 1 ? '' : 's'}`
  const where = line.expected
    ? `where R4 has ${withArticle(line.expected)}`
    : 'in an element R4 does not define'
  return `${line.path}: ${found} ${where}; first at ${line.first}`
}

/**
 * What an import found of the wrong JSON type, one line per element path and kind: the publisher's values are
 * stored and served as published, and indexed as what they meant (src/fhir/store/derive.ts); this tells the
 * operator the files are not valid FHIR.
 */
export class TypeFaultTally {
  readonly #lines = new Map<string, Omit<TypeFaultLine, 'text'>>()

  add(fault: TypeFault, source: string, line: number): void {
    const key = `${fault.path}|${fault.found}|${fault.expected ?? ''}`
    const known = this.#lines.get(key)
    if (known) known.count++
    else this.#lines.set(key, { ...fault, count: 1, first: `${source}:${line}` })
  }

  lines(): TypeFaultLine[] {
    return [...this.#lines.values()]
      .sort((a, b) => a.path.localeCompare(b.path) || a.found.localeCompare(b.found))
      .map((line) => ({ ...line, text: describeTypeFault(line) }))
  }
}
