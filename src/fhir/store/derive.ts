import type { TextTokenizer, TypeShape } from './declaration.js'
import { isJsonObject as isObject, type JsonObject } from '../../jsonObject.js'

/** The index rows of one resource, derived at import; the resource itself is stored as published. */
export interface IndexRows {
  tokens: [param: number, system: string, code: string][]
  refs: [param: number, target: string][]
  /** Per full-text table of the type (TypeIndex.texts, in order), one text per column; absent when none. */
  texts?: string[][]
}

type Json = JsonObject

type Visit = (value: unknown) => void

/** Visits a value, or each item of an array. */
function each(value: unknown, visit: Visit): void {
  if (Array.isArray(value)) for (const item of value) visit(item)
  else if (value !== undefined && value !== null) visit(value)
}

/**
 * A dotted path compiled once: it visits every value at the path, arrays flattened at each step, without
 * building the lists in between (an import derives a few paths for each of millions of resources).
 */
function compilePath(path: string): (resource: Json, visit: Visit) => void {
  const [first = '', ...rest] = path.split('.')
  if (rest.length === 0) return (resource, visit) => each(resource[first], visit)
  const inner = compilePath(rest.join('.'))
  return (resource, visit) =>
    each(resource[first], (value) => {
      if (isObject(value)) inner(value, visit)
    })
}

/**
 * A string-typed primitive as the publisher meant it: a number or a boolean where R4 has a string is read as
 * its canonical string form (`426637` → "426637"), so a search finds what the published bytes say.
 */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return String(value)
  return undefined
}

const referencePatterns = new Map<string, RegExp>()

/** The id a Reference points at when it names `type` (relative, absolute or versioned). */
export function referencedId(reference: unknown, type: string): string | undefined {
  const value = isObject(reference) ? reference.reference : undefined
  if (typeof value !== 'string') return undefined
  let pattern = referencePatterns.get(type)
  if (!pattern) {
    pattern = new RegExp(`(?:^|/)${type}/([A-Za-z0-9\\-.]{1,64})(?:/_history/[^/]*)?$`)
    referencePatterns.set(type, pattern)
  }
  return pattern.exec(value)?.[1]
}

/** The (system, code) pairs a token value holds: an Identifier, a CodeableConcept, a Coding or a code. */
function tokensOf(value: unknown): [string, string][] {
  if (!isObject(value)) {
    const code = primitiveText(value)
    return code === undefined || code === '' ? [] : [['', code]]
  }
  if (Array.isArray(value.coding)) return value.coding.flatMap((coding) => tokensOf(coding))
  const code = primitiveText('value' in value ? value.value : value.code)
  if (code === undefined || code === '') return []
  return [[typeof value.system === 'string' ? value.system : '', code]]
}

type Extractor = (resource: Json, rows: IndexRows) => void

/** Each row once: a resource has a handful, so a scan beats building a key per row for a Set. */
function addToken(rows: IndexRows, param: number, system: string, code: string): void {
  if (rows.tokens.some(([p, s, c]) => p === param && s === system && c === code)) return
  rows.tokens.push([param, system, code])
}

function addRef(rows: IndexRows, param: number, target: string): void {
  if (rows.refs.some(([p, t]) => p === param && t === target)) return
  rows.refs.push([param, target])
}

/** One full-text table of a type: how it splits text, and its columns in order. */
export interface TextIndex {
  tokenizer: TextTokenizer
  columns: string[]
}

/** A resource type's index: its extractors, compiled once from its search parameters, and its text tables. */
export interface TypeIndex {
  /** Its full-text tables (at most one per tokenizer); empty when it has no text search. */
  texts: TextIndex[]
  derive(resource: Json): IndexRows
}

type PathVisitor = (resource: Json, visit: Visit) => void

export function compileTypeIndex(declaration: TypeShape): TypeIndex {
  const extractors: Extractor[] = []
  const texts: (TextIndex & { paths: PathVisitor[][] })[] = []
  for (const param of Object.values(declaration.search?.params ?? {})) {
    const index = param.index
    if (!index) continue
    if (index.kind === 'token' && 'derive' in index) {
      extractors.push((resource, rows) => {
        for (const [system, code] of index.derive(resource)) addToken(rows, index.number, system, code)
      })
      continue
    }
    const paths = index.paths.map(compilePath)
    if (index.kind === 'token') {
      extractors.push((resource, rows) => {
        const add = (value: unknown) => {
          for (const [system, code] of tokensOf(value)) addToken(rows, index.number, system, code)
        }
        for (const visitPath of paths) visitPath(resource, add)
      })
    } else if (index.kind === 'reference') {
      extractors.push((resource, rows) => {
        const add = (value: unknown) => {
          const target = referencedId(value, index.target)
          if (target !== undefined) addRef(rows, index.number, target)
        }
        for (const visitPath of paths) visitPath(resource, add)
      })
    } else {
      const tokenizer = index.tokenizer ?? 'words'
      let table = texts.find((text) => text.tokenizer === tokenizer)
      if (!table) {
        table = { tokenizer, columns: [], paths: [] }
        texts.push(table)
      }
      if (!table.columns.includes(index.column)) {
        table.columns.push(index.column)
        table.paths.push(paths)
      }
    }
  }
  const columnText = (resource: Json, paths: PathVisitor[]) => {
    const found: string[] = []
    const add = (value: unknown) => {
      const text = primitiveText(value)
      if (text !== undefined) found.push(text)
    }
    for (const visitPath of paths) visitPath(resource, add)
    return found.join(' ; ')
  }
  return {
    texts: texts.map(({ tokenizer, columns }) => ({ tokenizer, columns })),
    derive(resource) {
      const rows: IndexRows = { tokens: [], refs: [] }
      for (const extract of extractors) extract(resource, rows)
      if (texts.length > 0)
        rows.texts = texts.map((table) => table.paths.map((paths) => columnText(resource, paths)))
      return rows
    },
  }
}
