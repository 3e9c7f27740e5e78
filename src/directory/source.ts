import type { DirectoryType } from './model.js'
import type { SearchKind, SearchValues } from './params.js'

type Resource = Record<string, unknown>

/** One page of a directory search, before it is shaped into a Bundle. */
export interface SearchPage {
  matches: Resource[]
  /** Entries added by `_include`. */
  includes: Resource[]
  total?: number
  /** State to seal into the `next` link's cursor, when more matches exist. */
  next?: unknown
}

/** Where the directory's answers come from: the imported release, or a remote FHIR directory. */
export interface DirectorySource {
  read(type: DirectoryType, id: string, signal: AbortSignal): Promise<Resource | undefined>
  /** A first page from checked parameters, or a later page from the state a cursor carried. */
  search(
    kind: SearchKind,
    request: { values: SearchValues } | { state: unknown },
    signal: AbortSignal,
  ): Promise<SearchPage>
}
