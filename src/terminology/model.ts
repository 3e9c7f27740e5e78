/** Code systems and value sets as the importers produce them and the store holds them. */

export interface PropertyValue {
  property: string
  /** The FHIR value[x] suffix (Code, String, Boolean, Integer, DateTime, Decimal, Coding). */
  type: string
  value: unknown
}

export interface ConceptRecord {
  code: string
  display?: string
  definition?: string
  status: string
  abstract: boolean
  designations?: unknown[]
  properties: PropertyValue[]
  parents: string[]
}

export interface PropertyDeclaration {
  code: string
  type?: string
  description?: string
  uri?: string
}

/** A release's concepts: an array, or built one by one as they are written (RxNorm's are many). */
export type ConceptList = Iterable<ConceptRecord> & { readonly length: number }

export interface CodeSystemRelease {
  url: string
  version: string
  name?: string
  title?: string
  status: string
  content: string
  properties: PropertyDeclaration[]
  /** Where the release was read from: a package and file, or an imported file. */
  origin: string
  concepts: ConceptList
}

export interface ValueSetRecord {
  url: string
  version: string
  name?: string
  title?: string
  status: string
  compose?: unknown
  origin: string
}

/** A record an importer could not take, with where it was found. */
export interface BadRecord {
  file: string
  /** 1-based line, or undefined for a record inside a JSON document. */
  line?: number
  /** Position inside a JSON document, e.g. `entry[12]`. */
  at?: string
  message: string
}

export function describeBadRecord(bad: BadRecord): string {
  const where =
    bad.line !== undefined ? `${bad.file}:${bad.line}` : `${bad.file}${bad.at ? ` ${bad.at}` : ''}`
  return `${where}: ${bad.message}`
}
