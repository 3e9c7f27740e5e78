import type { ParamIssue } from '../../http/errors.js'
import type { ParamSpec } from '../../api/params.js'
import type { StoredJson } from './stored.js'

/**
 * A FHIR resource domain declares its store here: its resource types, and for each its search parameters.
 * One declaration per search parameter drives its validation (and so /openapi.json and the
 * CapabilityStatement), the index rows it derives from each resource at import, the store conditions of a
 * search, and the form a remote FHIR server is asked it in.
 */
export interface StoreDeclaration {
  /** Names its release bookkeeping table (`<name>_releases`) and its release files (`svc.<name>-<n>.db`). */
  name: string
  /** Prefix of its tables (`<prefix>_resource`, `<prefix>_token`, ...), in release files and the main file. */
  prefix: string
  types: readonly ResourceTypeDeclaration[]
}

/**
 * What a store's tables are made from (src/fhir/store/schema.ts): its names, and what each type's search
 * parameters index. A declaration is one; a domain may also give it alone, without the parameters' rules.
 */
export interface StoreShape {
  name: string
  prefix: string
  types: readonly TypeShape[]
}

export interface TypeShape {
  type: string
  search?: { params: Record<string, { index?: IndexDeclaration }> }
}

export interface ResourceTypeDeclaration {
  type: string
  /** Its search, when it has one: a type may be read only. */
  search?: SearchDeclaration
  /**
   * Held to answer other questions of the domain (which networks a plan has), with no endpoint of its own:
   * its path may belong to another domain.
   */
  internal?: boolean
}

export interface SearchDeclaration {
  params: Record<string, SearchParam>
  /**
   * Page sizes: 1..max, default when absent; larger values refused. `whole`: no paging, every match in one
   * answer, and a search with no criterion lists every resource of the type (a short curated list).
   */
  count: { max: number; default: number } | 'whole'
  /** Whether a local search answers with `total` (Practitioner searches never do). */
  total: boolean
  /** `_include` (and reverse include) values, by the value a caller sends. */
  includes?: Record<string, IncludeDeclaration>
  /**
   * What a match's entry says about how it matched (`search.extension`) when the search gives token
   * parameter `param`: a plan sold in only part of the county asked, say. It gets the resource as stored, to
   * look at its bytes before parsing them (a plan can be hundreds of kilobytes). The matches it may mark are
   * those `param` indexes under `system` for the value asked: the others are neither marked nor read for it
   * (in release files made before MARKS_INDEXED_FROM, which did not index so, every match is read for it).
   */
  mark?: {
    param: string
    system: string
    of(stored: StoredJson, values: Record<string, unknown>): Record<string, unknown>[] | undefined
  }
}

/**
 * What an `_include` value adds: the resources the matches reference where the type's reference search
 * parameter `param` looks (its index says at which paths, and of which type), or, `reverse`, the resources of
 * type `from` whose reference parameter number `param` points at a match.
 */
export type IncludeDeclaration =
  { kind: 'forward'; param: string } | { kind: 'reverse'; from: string; param: number }

/** How a search parameter takes part in a search. */
export type SearchRole =
  /** May drive a search alone (at least one such is needed, or `page`). */
  | { kind: 'criterion' }
  /** Narrows a search; cannot stand alone. `of`: the criteria it narrows (default: any). */
  | { kind: 'narrows'; of?: readonly string[] }
  /** Shapes the answer (paging, `_include`, `_summary`), neither criterion nor narrower. */
  | { kind: 'control' }

export interface SearchParam {
  spec: ParamSpec
  role: SearchRole
  /** Indexed and usable by the domain's own code, never a parameter a caller may send (a partition key). */
  internal?: boolean
  /** The index rows it derives from each resource of its type, at import. */
  index?: IndexDeclaration
  /** The store conditions its checked value makes. */
  criteria?(value: unknown, type: string): Criterion[]
  /** Its checked value as a remote FHIR server is asked it: query values under the parameter's name. */
  remote?(value: unknown): string[]
  /**
   * Among criteria of one kind, a lower priority is tried first to drive the scan (default 0): a parameter
   * known to match few resources goes before one that matches many.
   */
  priority?: number
  /** A fault a value passed its rule but cannot be used with (a reference to another server). */
  check?(value: unknown, context: { baseUrl: string }): string | undefined
}

/**
 * Where a parameter's values are in a resource: dotted paths whose steps may hold arrays (`name.given`).
 * - token: each value an Identifier (system, value), CodeableConcept (its codings), Coding (system, code),
 *   or a primitive code (no system); a number or a boolean is indexed as its canonical string form. Or,
 *   `derive`, (system, code) pairs worked out from the whole resource (a county a whole-state plan covers).
 * - reference: each value a Reference naming a resource of `target` (relative, absolute or versioned).
 * - text: the strings joined into one column of one of the type's full-text tables: by words (`words`, the
 *   default: prefix and phrase searches) or by trigrams (`trigram`: any substring of 3 characters or more).
 */
export type IndexDeclaration =
  | { kind: 'token'; number: number; paths: readonly string[] }
  | {
      kind: 'token'
      number: number
      derive(resource: Record<string, unknown>): Iterable<[system: string, code: string]>
    }
  | { kind: 'reference'; number: number; paths: readonly string[]; target: string }
  | { kind: 'text'; column: string; paths: readonly string[]; tokenizer?: TextTokenizer }

export type TextTokenizer = 'words' | 'trigram'

/** One condition a match must meet; the most selective drives the scan, the others filter it. */
export type Criterion =
  | { kind: 'id'; type: string; id: string }
  /** Every resource of the type: what a `whole` search with no criterion matches. */
  | { kind: 'type'; type: string }
  | { kind: 'token'; param: number; code: string; systems?: readonly string[] }
  | { kind: 'ref'; param: number; target: string }
  /** FTS5 query fragments on one of the type's full-text tables; several on one table join with AND. */
  | { kind: 'text'; type: string; match: string; tokenizer?: TextTokenizer }

export type { ParamIssue }
