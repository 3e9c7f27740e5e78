import { randomUUID } from 'node:crypto'
import type { EndpointResponse } from '../api/endpoint.js'
import type { Terminology } from './terminology.js'
import { ApiError } from '../http/errors.js'
import { RECOGNISED_SYSTEMS } from './recognised.js'
import { forward, query } from './remote.js'
import { notServed, resolveCodeSystem } from './sources.js'
import {
  type CodeSystemRow,
  type ComposeFilter,
  type ComposeItem,
  codesHavingProperty,
  codesWithProperty,
  descendantsOrSelf,
  findValueSet,
  type ValueSetRow,
} from './store.js'

export interface ExpandInput {
  url: string
  filter?: string
  count?: number
  offset?: number
}

/** An expansion without `count` may hold at most this many codes; past it the caller pages. */
export const MAX_WHOLE_EXPANSION = 10_000
/** Value sets that include value sets that include... deeper than this are refused as circular. */
const MAX_DEPTH = 16

export interface Member {
  system: string
  version: string
  code: string
  display?: string
  abstract?: boolean
  inactive?: boolean
  /** The display's lower-cased words, when known ahead (from the concept cache). */
  words?: string[]
}

const key = (member: Member) => `${member.system}\u0000${member.code}`

/** The filter text matches when every word of it starts a word of the display, or starts the code. */
function textMatcher(filter: string | undefined): (member: Member) => boolean {
  const words = (filter ?? '').toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0) return () => true
  return (member) => {
    const code = member.code.toLowerCase()
    const displayWords = member.words ?? (member.display ?? '').toLowerCase().split(/[^\p{L}\p{N}]+/u)
    return words.every((word) => code.startsWith(word) || displayWords.some((w) => w.startsWith(word)))
  }
}

class Expander {
  readonly usedSystems = new Map<string, string>()

  constructor(private readonly terminology: Terminology) {}

  private system(url: string, version: string | undefined): CodeSystemRow {
    if (this.terminology.sources.has(url)) {
      throw new ApiError(400, {
        detail: `Value sets drawing on ${url}, which is answered by a remote source, cannot be expanded here; expand ${url}?fhir_vs for the whole system.`,
        fhirCode: 'not-supported',
        issues: [
          {
            path: ['url'],
            message: `Expansion needs ${url} from a remote source`,
            fhirCode: 'not-supported',
          },
        ],
      })
    }
    const resolved = resolveCodeSystem(this.terminology, url, version, 'url')
    if (resolved.kind !== 'local') throw notServed(url, 'url')
    this.usedSystems.set(resolved.system.url, resolved.system.version)
    return resolved.system
  }

  private members(system: CodeSystemRow): Member[] {
    return this.terminology.concepts.of(system).map((concept) => ({
      system: system.url,
      version: system.version,
      code: concept.code,
      display: concept.display,
      words: concept.words,
      ...(concept.abstract ? { abstract: true } : {}),
      ...(concept.inactive ? { inactive: true } : {}),
    }))
  }

  private filterCodes(system: CodeSystemRow, filter: ComposeFilter): (member: Member) => boolean {
    const { db } = this.terminology
    const { property, op, value } = filter
    switch (op) {
      case 'is-a':
      case 'descendent-of':
      case 'is-not-a': {
        const below = descendantsOrSelf(db, system.id, value)
        if (op === 'descendent-of') below.delete(value)
        return op === 'is-not-a' ? (m) => !below.has(m.code) : (m) => below.has(m.code)
      }
      case '=':
      case 'in': {
        const values = op === 'in' ? value.split(',').map((v) => v.trim()) : [value]
        if (property === 'concept' || property === 'code') return (m) => values.includes(m.code)
        if (property === 'display') return (m) => values.includes(m.display ?? '')
        const codes = new Set<string>()
        for (const v of values) {
          for (const candidate of [v, jsonValue(v)]) {
            if (candidate === undefined) continue
            for (const code of codesWithProperty(db, system.id, property, candidate)) codes.add(code)
          }
        }
        return (m) => codes.has(m.code)
      }
      case 'regex': {
        const pattern = new RegExp(`^(?:${value})$`, 'u')
        if (property === 'concept' || property === 'code') return (m) => pattern.test(m.code)
        if (property === 'display') return (m) => pattern.test(m.display ?? '')
        break
      }
      case 'exists': {
        const having = codesHavingProperty(db, system.id, property)
        return value === 'false' ? (m) => !having.has(m.code) : (m) => having.has(m.code)
      }
    }
    throw new ApiError(400, {
      detail: `The value set uses filter "${property} ${op} ${value}", which this server cannot expand.`,
      fhirCode: 'not-supported',
      issues: [{ path: ['url'], message: `Unsupported filter ${property} ${op}`, fhirCode: 'not-supported' }],
    })
  }

  private item(item: ComposeItem, depth: number): Member[] {
    let members: Member[] | undefined
    if (item.system) {
      const system = this.system(item.system, item.version)
      if (item.concept) {
        const known = new Map(this.members(system).map((m) => [m.code, m]))
        members = item.concept.flatMap(({ code, display }): Member[] => {
          const member = known.get(code)
          return member ? [display ? { ...member, display, words: undefined } : member] : []
        })
      } else {
        const all = this.members(system)
        const tests = (item.filter ?? []).map((filter) => this.filterCodes(system, filter))
        members = all.filter((m) => tests.every((test) => test(m)))
      }
    }
    for (const url of item.valueSet ?? []) {
      const included = new Set(this.valueSetUrl(url, depth + 1).map(key))
      members = members ? members.filter((m) => included.has(key(m))) : this.valueSetUrl(url, depth + 1)
    }
    return members ?? []
  }

  compose(valueSet: ValueSetRow, depth: number): Member[] {
    if (depth > MAX_DEPTH) {
      throw ApiError.invalid([{ path: ['url'], message: `Value set ${valueSet.url} includes itself` }])
    }
    if (!valueSet.compose) {
      throw new ApiError(400, {
        detail: `Value set ${valueSet.url} has no definition (compose) to expand.`,
        fhirCode: 'not-supported',
        issues: [
          { path: ['url'], message: `Value set ${valueSet.url} has no compose`, fhirCode: 'not-supported' },
        ],
      })
    }
    const out = new Map<string, Member>()
    for (const include of valueSet.compose.include) {
      for (const member of this.item(include, depth)) if (!out.has(key(member))) out.set(key(member), member)
    }
    for (const exclude of valueSet.compose.exclude ?? []) {
      for (const member of this.item(exclude, depth)) out.delete(key(member))
    }
    return [...out.values()]
  }

  /** A hosted value set, an implicit one (`<system>?fhir_vs`, `?fhir_vs=isa/<code>`), or a whole code system. */
  valueSetUrl(url: string, depth: number): Member[] {
    const implicit = parseImplicit(url)
    if (implicit) {
      const system = this.system(implicit.system, undefined)
      const all = this.members(system)
      if (implicit.isA === undefined) return all
      const test = this.filterCodes(system, { property: 'concept', op: 'is-a', value: implicit.isA })
      return all.filter(test)
    }
    const valueSet = findValueSet(this.terminology.db, url)
    if (valueSet) return this.compose(valueSet, depth)
    if (this.terminology.releases.codeSystem(url)) return this.members(this.system(url, undefined))
    if (RECOGNISED_SYSTEMS.has(url)) throw notServed(url, 'url')
    throw new ApiError(404, {
      detail: `No value set ${url} is hosted here.`,
      issues: [{ path: ['url'], message: `Unknown value set ${url}` }],
    })
  }
}

function jsonValue(text: string): unknown {
  try {
    const parsed = JSON.parse(text) as unknown
    return typeof parsed === 'string' ? undefined : parsed
  } catch {
    return undefined
  }
}

export function parseImplicit(url: string): { system: string; isA?: string } | undefined {
  const match = /^([^?]+)\?fhir_vs(?:=isa\/(.+))?$/.exec(url)
  if (!match) return undefined
  let isA: string | undefined
  try {
    isA = match[2] === undefined ? undefined : decodeURIComponent(match[2])
  } catch {
    throw ApiError.invalid([
      { path: ['url'], message: '"url" holds a % that starts no percent-escape in its is-a code' },
    ])
  }
  return { system: match[1] as string, isA }
}

/** The system a value set URL is answered from remotely, when it is an implicit value set of such a system. */
function remoteSystemOf(terminology: Terminology, url: string) {
  const implicit = parseImplicit(url)
  const system = implicit?.system ?? url
  return terminology.sources.get(system)
}

/**
 * ValueSet/$expand. Hosted value sets and the implicit value sets of held code systems are expanded here
 * and paged by `count` and `offset`; `count=0` answers only the total. An implicit value set of a system
 * answered by a remote source is expanded there and comes back whole.
 */
export async function expand(
  terminology: Terminology,
  input: ExpandInput,
  signal: AbortSignal,
): Promise<EndpointResponse> {
  const remote = remoteSystemOf(terminology, input.url)
  if (remote) {
    const search = query([
      ['url', input.url],
      ['filter', input.filter],
    ])
    return forward(remote, { path: `ValueSet/$expand?${search}`, signal }, 'ValueSet')
  }
  const expander = new Expander(terminology)
  const matches = textMatcher(input.filter)
  const members = expander.valueSetUrl(input.url, 0).filter(matches)
  const offset = input.offset ?? 0
  if (input.count === undefined && members.length - offset > MAX_WHOLE_EXPANSION) {
    throw ApiError.invalid(
      [
        {
          path: ['count'],
          message: `The expansion holds ${members.length} codes; page it with count (at most ${MAX_WHOLE_EXPANSION}) and offset, or narrow it with filter`,
          fhirCode: 'too-costly',
        },
      ],
      `The expansion is too large to answer whole (${members.length} codes).`,
    )
  }
  const page = members.slice(offset, input.count === undefined ? undefined : offset + input.count)
  const valueSet = findValueSet(terminology.db, input.url)
  const used = [
    ...(input.filter !== undefined ? [{ name: 'filter', valueString: input.filter }] : []),
    ...(input.count !== undefined ? [{ name: 'count', valueInteger: input.count }] : []),
    { name: 'offset', valueInteger: offset },
    ...[...expander.usedSystems].map(([url, version]) => ({
      name: 'used-codesystem',
      valueUri: `${url}|${version}`,
    })),
  ]
  return {
    body: {
      resourceType: 'ValueSet',
      url: input.url,
      ...(valueSet ? { version: valueSet.version } : {}),
      ...(valueSet?.name ? { name: valueSet.name } : {}),
      ...(valueSet?.title ? { title: valueSet.title } : {}),
      status: valueSet?.status ?? 'active',
      expansion: {
        identifier: `urn:uuid:${randomUUID()}`,
        timestamp: new Date(terminology.clock()).toISOString(),
        total: members.length,
        offset,
        parameter: used,
        ...(input.count === 0 ? {} : { contains: page.map(containsItem) }),
      },
    },
  }
}

function containsItem(member: Member): Record<string, unknown> {
  return {
    system: member.system,
    version: member.version,
    code: member.code,
    ...(member.display !== undefined ? { display: member.display } : {}),
    ...(member.abstract ? { abstract: true } : {}),
    ...(member.inactive ? { inactive: true } : {}),
  }
}
