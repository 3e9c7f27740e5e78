import { ApiError, type ParamIssue } from '../../http/errors.js'
import { FHIR_BASE } from '../../http/pathBase.js'
import type { Criterion, ResourceTypeDeclaration, SearchDeclaration } from './declaration.js'
import { referencedId } from './derive.js'
import type { ReadOptions, ReleaseReader, StoredResource } from './reader.js'
import { MARKS_INDEXED_FROM, REFERENCES_BY_RESOURCE_FROM, TALLIED_ABOVE } from './schema.js'
import type { SourcedResource, StoredJson } from './stored.js'

type Resource = Record<string, unknown>
export type SearchValues = Record<string, unknown>

/** One page of a search, before it is shaped into a Bundle. */
export interface SearchPage {
  matches: SourcedResource[]
  /** Entries added by `_include`. */
  includes: SourcedResource[]
  /** Per match, what its entry says about how it matched (SearchDeclaration.mark). */
  marks?: (Resource[] | undefined)[]
  total?: number
  /** State to seal into the `next` link's cursor, when more matches exist. */
  next?: unknown
}

/** Where a search domain's answers come from: its imported release, or a remote FHIR server. */
export interface SearchSource {
  /** `takesGzip`: EndpointRequest.takesGzip, for an answer that goes out as the resources come. */
  read(
    type: string,
    id: string,
    signal: AbortSignal,
    options?: { takesGzip?: boolean },
  ): Promise<SourcedResource | undefined>
  /**
   * A first page from checked parameters, or a later page from the state a cursor carried. `total: false`:
   * the caller reads every page and needs no count (a domain asking on its own behalf); a source that counts
   * anyway may still give one. `takesGzip` as for `read`.
   */
  search(
    type: string,
    request: { values: SearchValues } | { state: unknown },
    signal: AbortSignal,
    options?: { total?: boolean; takesGzip?: boolean },
  ): Promise<SearchPage>
}

const given = (values: SearchValues, name: string) => values[name] !== undefined

/**
 * The cross-parameter rules of a declared search, from each parameter's role: `page` alone, something to
 * search by, narrowers never alone (nor without the criteria they narrow), `_summary=count` without
 * `_include` or `_count`, and each parameter's own check (a reference to another server).
 */
export function searchRules(
  type: string,
  search: SearchDeclaration,
  values: SearchValues,
  baseUrl: string,
): ParamIssue[] {
  const issues: ParamIssue[] = []
  const sent = Object.keys(values).filter((name) => given(values, name) && name !== '_format')
  if (given(values, 'page')) {
    for (const name of sent.filter((name) => name !== 'page')) {
      issues.push({
        path: [name],
        message: `"${name}" cannot be sent with page: the cursor carries the whole search`,
      })
    }
    return issues
  }
  const declared = Object.entries(search.params).filter(([, param]) => !param.internal)
  const criteria = declared.filter(([, param]) => param.role.kind === 'criterion').map(([name]) => name)
  const hasCriterion = criteria.some((name) => given(values, name))
  for (const [name, param] of declared) {
    if (param.role.kind !== 'narrows' || !given(values, name)) continue
    const of = param.role.of ?? criteria
    if (of.some((criterion) => given(values, criterion))) continue
    if (!hasCriterion) {
      issues.push({
        path: [name],
        message: `"${name}" narrows a search and cannot stand alone; give ${of.join(', ')} as well`,
      })
    } else {
      issues.push({
        path: [name],
        message: `"${name}" narrows a search by ${of.join(', ')}; give one with it`,
      })
    }
  }
  if (!hasCriterion && issues.length === 0 && search.count !== 'whole') {
    issues.push({
      path: [criteria[0] ?? 'page'],
      message: `A search of ${type} needs one of ${criteria.join(', ')} or page`,
    })
  }
  if (values._summary === 'count') {
    for (const name of ['_include', '_count'].filter((name) => given(values, name))) {
      issues.push({ path: [name], message: `"${name}" cannot be combined with _summary=count` })
    }
  }
  for (const [name, param] of declared) {
    const fault = given(values, name)
      ? param.check?.(values[name], { baseUrl: `${baseUrl}${FHIR_BASE}` })
      : undefined
    if (fault) issues.push({ path: [name], message: `"${name}" ${fault}` })
  }
  return issues
}

/** The checked parameters of one search as store conditions, by priority then in declaration order. */
export function criteriaOf(type: string, search: SearchDeclaration, values: SearchValues): Criterion[] {
  const criteria = Object.entries(search.params)
    .filter(([name, param]) => given(values, name) && param.criteria)
    .sort(([, a], [, b]) => (a.priority ?? 0) - (b.priority ?? 0))
    .flatMap(([name, param]) => param.criteria?.(values[name], type) ?? [])
  return criteria.length === 0 && search.count === 'whole' ? [{ kind: 'type', type }] : criteria
}

/** The checked parameters as a remote FHIR server is asked them. */
export function remoteQuery(search: SearchDeclaration, values: SearchValues): URLSearchParams {
  const query = new URLSearchParams()
  for (const [name, param] of Object.entries(search.params)) {
    if (!given(values, name) || !param.remote || name === 'page') continue
    for (const value of param.remote(values[name])) query.append(name, value)
  }
  return query
}

/**
 * A first page that needs a total looks up to this many matches past its own (their rids, not their
 * resources): fewer than that, and it has counted them. More, and a release counted them as it was built
 * when they are one value's (TALLIED_ABOVE).
 */
const COUNTED_WITH_PAGE = TALLIED_ABOVE

/** What a local cursor carries: the checked parameters, the last rid served, the release, the total. */
interface LocalState {
  p: SearchValues
  a: number
  r: number
  t?: number
}

/** An `_include` as a search runs it: a forward one with the reference index of the parameter it follows. */
type Include =
  | { kind: 'forward'; param: number; paths: readonly string[]; target: string }
  | { kind: 'reverse'; from: string; param: number }

const NONE_ASKED: readonly Include[] = []

/** A type's includes, by `_include` value, each forward one resolved to its parameter's reference index. */
function includesOf(type: ResourceTypeDeclaration): Map<string, Include> {
  const search = type.search
  return new Map(
    Object.entries(search?.includes ?? {}).map(([name, include]): [string, Include] => {
      if (include.kind === 'reverse') return [name, include]
      const index = search?.params[include.param]?.index
      if (index?.kind !== 'reference') {
        throw new Error(`${name} follows ${include.param}, which is no reference parameter of ${type.type}`)
      }
      return [name, { kind: 'forward', param: index.number, paths: index.paths, target: index.target }]
    }),
  )
}

const refs = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value]

/**
 * The ids a forward include takes from a resource's text, in files made before references were indexed by
 * resource.
 */
function referencedIds(resource: Resource, include: Include & { kind: 'forward' }): string[] {
  return include.paths.flatMap((path) =>
    refs(resource[path]).flatMap((reference) => referencedId(reference, include.target) ?? []),
  )
}

/** A store's imported release as a search source: keyset pages by rid, `_include`s, totals as declared. */
export class LocalSearch implements SearchSource {
  readonly #types: Map<string, ResourceTypeDeclaration>
  readonly #includes: Map<string, Map<string, Include>>

  constructor(
    private readonly reader: ReleaseReader,
    types: readonly ResourceTypeDeclaration[],
    /** What a cursor from a release since replaced answers: the spec says 400 for some searches, 410 for others. */
    private readonly replaced: () => ApiError,
  ) {
    this.#types = new Map(types.map((type) => [type.type, type]))
    this.#includes = new Map(types.map((type) => [type.type, includesOf(type)]))
  }

  /** The includes a search's `_include` values ask for, in the order asked. */
  #asked(type: string, values: SearchValues): readonly Include[] {
    if (values._include === undefined) return NONE_ASKED
    const includes = this.#includes.get(type)
    return ([] as string[])
      .concat(values._include as string | string[])
      .flatMap((name) => includes?.get(name) ?? [])
  }

  async read(
    type: string,
    id: string,
    _signal?: AbortSignal,
    options: { takesGzip?: boolean } = {},
  ): Promise<SourcedResource | undefined> {
    return this.reader.readOne(type, id, { gzip: options.takesGzip })
  }

  async search(
    type: string,
    request: { values: SearchValues } | { state: unknown },
    _signal?: AbortSignal,
    options: { total?: boolean; takesGzip?: boolean } = {},
  ): Promise<SearchPage> {
    const search = this.#types.get(type)?.search
    if (!search) throw new Error(`${type} has no search`)
    return this.reader.snapshot(() => {
      const release = this.reader.release()
      const state: LocalState =
        'state' in request ? (request.state as LocalState) : { p: request.values, a: 0, r: release }
      if (state.r !== release) throw this.replaced()
      const values = state.p
      const criteria = criteriaOf(type, search, values)
      if (values._summary === 'count')
        return { matches: [], includes: [], total: this.reader.count(criteria) }
      const count =
        typeof values._count === 'number'
          ? values._count
          : search.count === 'whole'
            ? Number.MAX_SAFE_INTEGER
            : search.count.default
      const mark = search.mark && given(values, search.mark.param) ? search.mark : undefined
      const format = this.reader.format()
      // Marks read the text of the matches they may mark: of all of them in files that do not say which.
      const marksKnown = mark !== undefined && format >= MARKS_INDEXED_FROM
      const asked = this.#asked(type, values)
      // Forward includes read the matches' references from the index where the file has it, else from the text.
      const referencesKnown = format >= REFERENCES_BY_RESOURCE_FROM
      const wantsTotal = search.total && options.total !== false
      const first = state.a === 0
      const tallied = wantsTotal && first && state.t === undefined ? this.reader.tallied(criteria) : undefined
      // The matches' text is read with them when something reads inside them: marks and forward includes in
      // files that index neither. A first page that must count looks up to COUNTED_WITH_PAGE matches: the
      // count query would run the search again.
      const {
        rows: page,
        more,
        counted,
      } = this.reader.page(criteria, state.a, count, {
        gzip: options.takesGzip,
        text:
          (mark !== undefined && !marksKnown) ||
          (!referencesKnown && asked.some((include) => include.kind === 'forward')),
        countUpTo:
          wantsTotal && first && state.t === undefined && tallied === undefined
            ? COUNTED_WITH_PAGE
            : undefined,
      })
      const total = wantsTotal
        ? (state.t ?? tallied ?? (first ? counted : undefined) ?? this.reader.count(criteria))
        : undefined
      const matches = page.map((row) => row.stored)
      const last = page.at(-1)
      return {
        matches,
        includes: this.#included(asked, page, referencesKnown, { gzip: options.takesGzip }),
        ...(mark ? { marks: this.#marks(search, mark, values, page, marksKnown) } : {}),
        ...(total !== undefined ? { total } : {}),
        ...(more && last
          ? { next: { p: values, a: last.rid, r: release, t: total } satisfies LocalState }
          : {}),
      }
    })
  }

  #marks(
    search: SearchDeclaration,
    mark: NonNullable<SearchDeclaration['mark']>,
    values: SearchValues,
    page: readonly StoredResource[],
    marksKnown: boolean,
  ): (Resource[] | undefined)[] {
    const index = search.params[mark.param]?.index
    if (!marksKnown || index?.kind !== 'token') return page.map(({ stored }) => mark.of(stored, values))
    const marked = this.reader.indexedUnder(
      index.number,
      mark.system,
      String(values[mark.param]),
      page.map(({ rid }) => rid),
    )
    return page.map(({ rid, stored }) => (marked.has(rid) ? mark.of(stored, values) : undefined))
  }

  /**
   * What the page's includes add, in the order of the matches, then of the includes asked, then of each
   * match's references as they stand in it (the index keeps them in that order): once each, and never a match.
   */
  #included(
    asked: readonly Include[],
    page: readonly StoredResource[],
    referencesKnown: boolean,
    reading: ReadOptions,
  ): StoredJson[] {
    if (asked.length === 0) return []
    const forward = asked.flatMap((include) => (include.kind === 'forward' ? [include.param] : []))
    const indexed =
      referencesKnown && forward.length > 0
        ? this.reader.referencesOf(
            page.map(({ rid }) => rid),
            forward,
          )
        : undefined
    const seen = new Set(page.map(({ stored }) => `${stored.type}/${stored.id}`))
    const out: StoredJson[] = []
    const add = (stored: StoredJson | undefined) => {
      if (!stored) return
      const key = `${stored.type}/${stored.id}`
      if (seen.has(key)) return
      seen.add(key)
      out.push(stored)
    }
    for (const { rid, stored } of page) {
      for (const include of asked) {
        if (include.kind === 'reverse') {
          for (const found of this.reader.referencing(include.param, stored.id, reading)) add(found)
          continue
        }
        const ids = indexed
          ? (indexed.get(rid)?.get(include.param) ?? [])
          : referencedIds(stored.resource, include)
        // A resource already in the answer is not read again (a network's affiliations name their few
        // primary organizations over and over).
        for (const id of ids)
          if (!seen.has(`${include.target}/${id}`)) add(this.reader.read(include.target, id, reading))
      }
    }
    return out
  }
}
