import { z } from 'zod'
import type { ParamIssue } from '../http/errors.js'

/**
 * A query parameter's declaration: the rule its raw value(s) must meet, whether it may repeat, and its
 * documentation. The same declaration drives checking, the batch dispatcher and /openapi.json.
 */
export interface ParamSpec<S extends z.ZodType = z.ZodType> {
  schema: S
  description: string
  /** Repeatable parameters receive every value as an array; others are refused when sent twice. */
  repeatable: boolean
  /** Beyond this many values the request is refused with FHIR code `too-long`. */
  maxRepeats?: number
  /** FHIR search parameter type, for the CapabilityStatement. */
  fhirType: FhirSearchType
  /**
   * The FHIR type a Parameters body gives it in: `primitive` (any value[x] of a primitive type, read as
   * its string form, so one rule checks URL and body alike) or a complex type (`valueCoding`, ...).
   */
  bodyType: 'primitive' | 'Coding' | 'CodeableConcept'
  /** Only a Parameters body can carry it (a complex type with no URL form). */
  bodyOnly?: boolean
}

export type FhirSearchType = 'number' | 'date' | 'string' | 'token' | 'reference' | 'uri' | 'special'

export type ParamShape = Record<string, ParamSpec>
export type ParamValues<P extends ParamShape> = { [K in keyof P]: z.output<P[K]['schema']> }

type Optional<S extends z.ZodType> = z.ZodOptional<S>

function spec<S extends z.ZodType>(
  schema: S,
  description: string,
  fhirType: FhirSearchType,
): ParamSpec<Optional<S>> {
  return { schema: schema.optional(), description, repeatable: false, fhirType, bodyType: 'primitive' }
}

const INTEGER = /^(0|[1-9][0-9]*)$/

const CODING_OBJECT = z.object(
  {
    system: z.string().min(1, 'system must be a non-empty string').optional(),
    version: z.string().min(1, 'version must be a non-empty string').optional(),
    code: z.string({ error: 'must carry a code' }).min(1, 'must carry a code'),
    display: z.string().optional(),
  },
  { error: 'must be a Coding' },
)

const CODING = z.union(
  [
    z
      .string()
      .regex(/^[^|]+\|[^|]+$/, 'must be system|code')
      .transform((token) => {
        const [system, code] = token.split('|') as [string, string]
        return { system, code } as z.output<typeof CODING_OBJECT>
      }),
    CODING_OBJECT,
  ],
  { error: 'must be a Coding, or system|code in the URL' },
)

const CODEABLE_CONCEPT = z.object(
  {
    coding: z.array(CODING_OBJECT).min(1, 'must carry at least one coding'),
    text: z.string().optional(),
  },
  { error: 'must be a CodeableConcept' },
)

export type Coding = z.output<typeof CODING_OBJECT>
const BOOLEAN = /^(true|false)$/

/** Builders for the value rules the spec uses; each produces exact, human messages. */
export const param = {
  /** A rule of the caller's own, for values the builders below do not cover. */
  custom<S extends z.ZodType>(schema: S, description: string, fhirType: FhirSearchType) {
    return spec(schema, description, fhirType)
  },

  string(description: string, bounds: { min?: number; max?: number; pattern?: RegExp } = {}) {
    const min = bounds.min ?? 1
    let schema = z.string().min(min, `must be at least ${min} character${min === 1 ? '' : 's'} long`)
    if (bounds.max !== undefined)
      schema = schema.max(bounds.max, `must be at most ${bounds.max} characters long`)
    if (bounds.pattern) schema = schema.regex(bounds.pattern, `must match ${bounds.pattern.source}`)
    return spec(schema, description, 'string')
  },

  enumeration<const T extends readonly [string, ...string[]]>(values: T, description: string) {
    return spec(z.enum(values, { error: `must be one of ${values.join(', ')}` }), description, 'token')
  },

  integer(min: number, max: number, description: string) {
    const message = `must be an integer from ${min} to ${max}`
    return spec(
      z
        .string()
        .regex(INTEGER, message)
        .transform(Number)
        // int's own check (the safe range) with the same message: a value past 2^53 - 1 is refused as any other.
        .pipe(z.number().int({ error: message }).min(min, message).max(max, message)),
      description,
      'number',
    )
  },

  boolean(description: string) {
    return spec(
      z
        .string()
        .regex(BOOLEAN, 'must be true or false')
        .transform((value) => value === 'true')
        .pipe(z.boolean()),
      description,
      'token',
    )
  },

  /** ISO 8601 date-time that carries seconds and an offset (or Z). */
  dateTime(description: string) {
    const message = 'must be an ISO 8601 date-time with seconds and an offset, e.g. 2026-11-21T09:00:00Z'
    return spec(
      z.iso
        .datetime({ offset: true, local: false, precision: undefined, error: message })
        .regex(/T\d{2}:\d{2}:\d{2}/, message),
      description,
      'date',
    )
  },

  /** Comma-separated list of up to `max` non-empty values, each matching `item` when given. */
  list(max: number, description: string, item?: { pattern: RegExp; message: string }) {
    let value = z.string().min(1, 'must not contain empty values')
    if (item) value = value.regex(item.pattern, item.message)
    return spec(
      z
        .string()
        .transform((raw) => raw.split(','))
        .pipe(z.array(value).max(max, `must list at most ${max} values`)),
      description,
      'token',
    )
  },

  repeatable<S extends z.ZodType>(
    item: S,
    description: string,
    maxRepeats?: number,
    fhirType: FhirSearchType = 'token',
  ): ParamSpec<Optional<z.ZodArray<S>>> {
    return {
      schema: z.array(item).optional(),
      description,
      repeatable: true,
      maxRepeats,
      fhirType,
      bodyType: 'primitive',
    }
  },

  /** A Coding: `valueCoding` in a Parameters body, or `system|code` in the URL. */
  coding(description: string): ParamSpec<Optional<typeof CODING>> {
    return {
      schema: CODING.optional(),
      description,
      repeatable: false,
      fhirType: 'token',
      bodyType: 'Coding',
    }
  },

  /** A CodeableConcept; only a Parameters body can carry one. */
  codeableConcept(description: string): ParamSpec<Optional<typeof CODEABLE_CONCEPT>> {
    return {
      schema: CODEABLE_CONCEPT.optional(),
      description,
      repeatable: false,
      fhirType: 'token',
      bodyType: 'CodeableConcept',
      bodyOnly: true,
    }
  },
}

/** The same declaration under another FHIR search type (a string-valued reference or token, say). */
export function asFhirType<S extends z.ZodType>(
  declared: ParamSpec<S>,
  fhirType: FhirSearchType,
): ParamSpec<S> {
  return { ...declared, fhirType }
}

/**
 * Gives a parameter a default written as it would be sent (`'25'`, `'false'`); the default goes through the
 * same rule as a sent value (zod's `prefault`), so handlers always receive the parsed type.
 */
export function withDefault<S extends z.ZodType>(
  declared: ParamSpec<Optional<S>>,
  value: z.input<S>,
): ParamSpec<z.ZodPrefault<S>> {
  const inner = (declared.schema as Optional<S>).unwrap()
  return { ...declared, schema: inner.prefault(value as never) as z.ZodPrefault<S> }
}

/** Makes a parameter mandatory. */
export function required<S extends z.ZodType>(declared: ParamSpec<Optional<S>>): ParamSpec<S> {
  return { ...declared, schema: (declared.schema as Optional<S>).unwrap() }
}

export function isRequired(declared: ParamSpec): boolean {
  return !declared.schema.safeParse(undefined).success
}

/** Raw parameter values by name, in order, repeats kept: strings from a URL, JSON values from a body. */
export type RawParams = Map<string, unknown[]>

/** Collects raw query values by name, keeping order and repeats. */
export function groupQuery(query: URLSearchParams): RawParams {
  const grouped: RawParams = new Map()
  for (const [name, value] of query) {
    const values = grouped.get(name)
    if (values) values.push(value)
    else grouped.set(name, [value])
  }
  return grouped
}

/**
 * The parameter, or the part of it, an issue is about: `"property" (value 2)` for a repeated parameter's
 * second value, `"npi"` for an item of a comma-separated list (its rule speaks of the list, and the value is
 * quoted after), `"codeableConcept.coding[0].code"` inside a structured value.
 */
function faultyPart(name: string, path: readonly PropertyKey[], repeatable: boolean): string {
  const [head, ...rest] = path
  const inner = typeof head === 'number' ? rest : path
  const within = inner.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')
  const named = `"${name}${within}"`
  return typeof head === 'number' && repeatable ? `${named} (value ${head + 1})` : named
}

function describeReceived(raw: unknown): string {
  if (raw === undefined) return ''
  const one = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
  const text = Array.isArray(raw) ? raw.map(one).join(', ') : one(raw)
  return ` (got "${text.length > 60 ? `${text.slice(0, 57)}...` : text}")`
}

/** A shape's entries, listed once: every request of an endpoint walks them. */
const shapeEntries = new WeakMap<ParamShape, [string, ParamSpec][]>()

function declarationsOf(shape: ParamShape): [string, ParamSpec][] {
  let entries = shapeEntries.get(shape)
  if (!entries) {
    entries = Object.entries(shape)
    shapeEntries.set(shape, entries)
  }
  return entries
}

type ParseResult = ReturnType<z.ZodType['safeParse']>

/** What an absent parameter parses to (undefined, its default, or "required"), by declaration. */
const absentResults = new WeakMap<ParamSpec, ParseResult>()

/** Most declared parameters are absent from a given request; their outcome never changes, so it is kept. */
function parseAbsent(declared: ParamSpec): ParseResult {
  let result = absentResults.get(declared)
  if (!result) {
    result = declared.schema.safeParse(undefined)
    // An object default (a list, say) is made afresh for each request: a handler may change its copy.
    const shared = !result.success || typeof result.data !== 'object' || result.data === null
    if (shared) absentResults.set(declared, result)
  }
  return result
}

/** A character FHIR's `string` does not allow: below U+0020, except tab, CR and LF. */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/

/**
 * Why a value (a string, or the strings inside a body value) is not text, if it is not: a control
 * character, or a lone surrogate (not a character at all). Checked before any rule, so no value reaches a
 * query, a full-text index or an upstream as bytes.
 */
export function textFault(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const control = CONTROL.exec(value)?.[0]
    if (control !== undefined)
      return `holds a control character (U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`
    return value.isWellFormed() ? undefined : 'holds a lone surrogate, which is not a character'
  }
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) {
      const fault = textFault(item)
      if (fault) return fault
    }
  }
  return undefined
}

/** The names of query parameters whose raw name or value holds a `%` that starts no escape. */
export function malformedEscapes(rawQuery: string): string[] {
  if (!rawQuery.includes('%')) return []
  const names: string[] = []
  for (const pair of rawQuery.split('&')) {
    if (!/%(?![0-9A-Fa-f]{2})/.test(pair)) continue
    const name = pair.split('=')[0] ?? ''
    let decoded: string
    try {
      decoded = decodeURIComponent(name.replaceAll('+', ' '))
    } catch {
      decoded = name
    }
    names.push(decoded)
  }
  return names
}

/**
 * Checks names first (undeclared and repeated ones, all at once), then every value; returns the parsed
 * values or every issue found. `found` carries issues already seen while reading a body.
 */
export function checkParams<P extends ParamShape>(
  shape: P,
  raw: RawParams,
  found: { names?: ParamIssue[]; values?: ParamIssue[] } = {},
): { ok: true; values: ParamValues<P> } | { ok: false; issues: ParamIssue[] } {
  const nameIssues: ParamIssue[] = [...(found.names ?? [])]
  for (const [name, values] of raw) {
    const declared = shape[name]
    if (!declared) {
      const accepted = Object.keys(shape)
      const acceptedText =
        accepted.length > 0 ? `accepted parameters: ${accepted.join(', ')}` : 'this path takes no parameters'
      nameIssues.push({ path: [name], message: `Unknown parameter "${name}"; ${acceptedText}` })
    } else if (!declared.repeatable && values.length > 1) {
      nameIssues.push({ path: [name], message: `Parameter "${name}" is repeated; give it once` })
    }
  }
  if (nameIssues.length > 0) return { ok: false, issues: nameIssues }

  const issues: ParamIssue[] = [...(found.values ?? [])]
  const faulty = issues.length > 0 ? new Set(issues.map((issue) => issue.path[0])) : undefined
  const values: Record<string, unknown> = {}
  for (const [name, declared] of declarationsOf(shape)) {
    if (faulty?.has(name)) continue
    const given = raw.get(name)
    if (declared.maxRepeats !== undefined && given && given.length > declared.maxRepeats) {
      issues.push({
        path: [name],
        message: `Parameter "${name}" may be given at most ${declared.maxRepeats} times (got ${given.length})`,
        fhirCode: 'too-long',
      })
      continue
    }
    const input = declared.repeatable ? given : given?.[0]
    const fault = input === undefined ? undefined : textFault(input)
    if (fault) {
      issues.push({ path: [name], message: `"${name}" ${fault}; values are text` })
      continue
    }
    const result = input === undefined ? parseAbsent(declared) : declared.schema.safeParse(input)
    if (result.success) {
      values[name] = result.data
    } else {
      const first = result.error.issues[0]
      const message =
        input === undefined
          ? `Parameter "${name}" is required`
          : `${faultyPart(name, first?.path ?? [], declared.repeatable)} ${first?.message ?? 'is invalid'}${describeReceived(input)}`
      issues.push({ path: [name], message })
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, values: values as ParamValues<P> }
}
