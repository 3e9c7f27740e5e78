import { z } from 'zod'
import { asFhirType, param } from '../../api/params.js'
import { ID_PATTERN } from '../id.js'
import type { SearchParam } from './declaration.js'

const WORD = /[\p{L}\p{N}]/u

/** A string of `min` to `max` characters, each bound named in its message. */
function boundedString(min: number, max: number) {
  return z
    .string()
    .min(min, `must be at least ${min} character${min === 1 ? '' : 's'} long`)
    .max(max, `must be at most ${max} characters long`)
}

/** A reference value as given: bare id, `<Type>/<id>`, or an absolute URL (checked against our base). */
export interface RefValue {
  id: string
  /** Set when the value was an absolute URL: the base it names, to be checked as ours. */
  url?: string
}

/** A token value as given: `code` or `system|code`. */
export interface TokenValue {
  system?: string
  code: string
}

/** A reference's value rule: an id, `<Type>/<id>`, and with `allowUrl` a fullUrl returned by this service. */
function referenceSchema(type: string, allowUrl: boolean) {
  const article = /^[AEIOU]/.test(type) ? 'an' : 'a'
  const forms = `${article} ${type} id${allowUrl ? `, ${type}/<id> or a fullUrl returned by this service` : ` or ${type}/<id>`}`
  const relative = new RegExp(`^${type}/([A-Za-z0-9\\-.]{1,64})$`)
  const absolute = new RegExp(`^(https?://.+)/${type}/([A-Za-z0-9\\-.]{1,64})$`)
  return boundedString(1, 256).transform((value, ctx): RefValue => {
    if (ID_PATTERN.test(value)) return { id: value }
    const local = relative.exec(value)
    if (local?.[1]) return { id: local[1] }
    const remote = allowUrl ? absolute.exec(value) : null
    if (remote?.[1] && remote[2]) return { id: remote[2], url: remote[1] }
    ctx.addIssue({ code: 'custom', message: `must be ${forms}` })
    return z.NEVER
  })
}

/** A reference search parameter, indexed from References at `paths` naming a `target`. */
export function referenceParam(options: {
  number: number
  paths: readonly string[]
  target: string
  description: string
  allowUrl: boolean
  role?: SearchParam['role']
}): SearchParam {
  const { target } = options
  return {
    spec: param.custom(referenceSchema(target, options.allowUrl), options.description, 'reference'),
    role: options.role ?? { kind: 'criterion' },
    index: { kind: 'reference', number: options.number, paths: options.paths, target },
    criteria: (value) => [{ kind: 'ref', param: options.number, target: (value as RefValue).id }],
    remote: (value) => [`${target}/${(value as RefValue).id}`],
    check: (value, { baseUrl }) => {
      const url = (value as RefValue).url
      return url === undefined || url === baseUrl
        ? undefined
        : `names an address on another server (${url}); give an id, a <Type>/<id> reference or a fullUrl of this service`
    },
  }
}

/** `code` or `system|code`; `closed` limits the codes (and the system) when the code system is closed. */
export function tokenSchema(closed?: { system: string; codes: readonly string[] }) {
  return boundedString(1, 256).transform((value, ctx): TokenValue => {
    const bar = value.indexOf('|')
    const system = bar === -1 ? undefined : value.slice(0, bar)
    const code = bar === -1 ? value : value.slice(bar + 1)
    if (code === '' || system === '') {
      ctx.addIssue({ code: 'custom', message: 'must be a code or system|code, both non-empty' })
      return z.NEVER
    }
    if (closed && system !== undefined && system !== closed.system) {
      ctx.addIssue({ code: 'custom', message: `system must be ${closed.system}` })
      return z.NEVER
    }
    if (closed && !closed.codes.includes(code)) {
      ctx.addIssue({ code: 'custom', message: `code must be one of ${closed.codes.join(', ')}` })
      return z.NEVER
    }
    return system === undefined ? { code } : { system, code }
  })
}

/** A token search parameter (`code` or `system|code`), indexed from identifiers, codings or codes at `paths`. */
export function tokenParam(options: {
  number: number
  paths: readonly string[]
  description: string
  closed?: { system: string; codes: readonly string[] }
  role?: SearchParam['role']
}): SearchParam {
  return {
    spec: param.custom(tokenSchema(options.closed), options.description, 'token'),
    role: options.role ?? { kind: 'criterion' },
    index: { kind: 'token', number: options.number, paths: options.paths },
    criteria: (value) => {
      const token = value as TokenValue
      return [
        {
          kind: 'token',
          param: options.number,
          code: token.code,
          ...(token.system !== undefined ? { systems: [token.system] } : {}),
        },
      ]
    },
    remote: (value) => {
      const token = value as TokenValue
      return [token.system === undefined ? token.code : `${token.system}|${token.code}`]
    },
  }
}

/** What a token indexed without a system has besides its value rule: a code, a boolean, an exact string. */
interface PlainTokenOptions {
  number: number
  paths: readonly string[]
  description: string
  role?: SearchParam['role']
}

function plainTokenParam(options: PlainTokenOptions, spec: SearchParam['spec']): SearchParam {
  return {
    spec,
    role: options.role ?? { kind: 'criterion' },
    index: { kind: 'token', number: options.number, paths: options.paths },
    criteria: (value) => [{ kind: 'token', param: options.number, code: String(value) }],
    remote: (value) => [String(value)],
  }
}

/** A closed list of codes, indexed as a token without a system (a status, say). */
export function codeParam<const T extends readonly [string, ...string[]]>(
  options: PlainTokenOptions & { values: T },
): SearchParam {
  return plainTokenParam(options, param.enumeration(options.values, options.description))
}

/** `true` or `false`, indexed from a boolean element as its string form. */
export function booleanParam(options: PlainTokenOptions): SearchParam {
  return plainTokenParam(options, param.boolean(options.description))
}

const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`

/**
 * A FHIR string search on one column of the type's full-text table (case and accents folded). `words`:
 * every word of the value prefixes a word of the column (a name); `phrase`: the value as one phrase whose
 * last word may be a prefix ("north hav" finds North Haven: a place name); `start`: that phrase at the
 * start of the column, as FHIR's plain string search has it.
 */
export function textParam(options: {
  column: string
  paths: readonly string[]
  description: string
  match: 'words' | 'phrase' | 'start'
  max?: number
  role?: SearchParam['role']
}): SearchParam {
  const max = options.max ?? 100
  const { column } = options
  return {
    spec: param.custom(
      boundedString(1, max).regex(WORD, 'must contain a letter or a digit'),
      options.description,
      'string',
    ),
    role: options.role ?? { kind: 'criterion' },
    index: { kind: 'text', column, paths: options.paths },
    criteria: (value, type) => {
      const text = String(value)
      const fragments =
        options.match !== 'words'
          ? [`${column} : ${options.match === 'start' ? '^' : ''}${quoted(text)}*`]
          : text
              .split(/\s+/)
              .filter((word) => WORD.test(word))
              .map((word) => `${column} : ${quoted(word)}*`)
      return [{ kind: 'text', type, match: fragments.join(' AND ') }]
    },
    remote: (value) => [String(value)],
  }
}

/**
 * FHIR's `:contains` on a string: the value anywhere in the column, case and accents folded, through the
 * type's trigram table. Three characters at least: a trigram index cannot find less, and a shorter
 * fragment would match most of the store.
 */
export function containsParam(options: {
  column: string
  paths: readonly string[]
  description: string
  max?: number
  role?: SearchParam['role']
}): SearchParam {
  const max = options.max ?? 100
  return {
    spec: param.custom(boundedString(3, max), options.description, 'string'),
    role: options.role ?? { kind: 'criterion' },
    index: { kind: 'text', column: options.column, paths: options.paths, tokenizer: 'trigram' },
    criteria: (value, type) => [
      { kind: 'text', type, tokenizer: 'trigram', match: `${options.column} : ${quoted(String(value))}` },
    ],
    remote: (value) => [String(value)],
  }
}

/** FHIR's `:exact` on a string: the whole value, case and accents as written, indexed as a token. */
export function exactParam(options: PlainTokenOptions & { max?: number }): SearchParam {
  return plainTokenParam(
    options,
    param.custom(boundedString(1, options.max ?? 100), options.description, 'string'),
  )
}

/** `_id`: one resource of the type by its id. */
export function idParam(): SearchParam {
  return {
    spec: asFhirType(param.string('Resource id', { max: 64, pattern: ID_PATTERN }), 'token'),
    role: { kind: 'criterion' },
    criteria: (value, type) => [{ kind: 'id', type, id: String(value) }],
    remote: (value) => [String(value)],
  }
}

/** `_include` values, repeatable up to 16 times when `repeatable`. */
export function includeParam<const T extends readonly [string, ...string[]]>(
  values: T,
  description: string,
  repeatable: boolean,
): SearchParam {
  const spec = repeatable
    ? param.repeatable(
        z.enum(values, { error: `must be one of ${values.join(', ')}` }),
        description,
        16,
        'special',
      )
    : asFhirType(param.enumeration(values, description), 'special')
  return {
    spec,
    role: { kind: 'control' },
    remote: (value) => (Array.isArray(value) ? value.map(String) : [String(value)]),
  }
}

/** `_summary=count`: the number of matches as `total`, with no entries. */
export function summaryCountParam(): SearchParam {
  return {
    spec: param.enumeration(
      ['count'] as const,
      'count: answer the number of matches as `total`, with no entries; not with _include, _revinclude, _count or page.',
    ),
    role: { kind: 'control' },
    remote: (value) => [String(value)],
  }
}

/** `_count` and `page`, as every paged search of the store has them. */
export function pagingParams(count: { max: number; default: number }): Record<string, SearchParam> {
  return {
    _count: {
      spec: param.integer(
        1,
        count.max,
        `Page size, 1..${count.max} (default ${count.default}); a larger value is refused, not reduced.`,
      ),
      role: { kind: 'control' },
      remote: (value) => [String(value)],
    },
    page: {
      spec: asFhirType(
        param.string(
          'Opaque continuation cursor from a `next` link; expires. Carries the whole search: send it alone.',
          { max: 8192 },
        ),
        'special',
      ),
      role: { kind: 'control' },
    },
  }
}
