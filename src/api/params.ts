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
}

export type ParamShape = Record<string, ParamSpec>
export type ParamValues<P extends ParamShape> = { [K in keyof P]: z.output<P[K]['schema']> }

type Optional<S extends z.ZodType> = z.ZodOptional<S>

function spec<S extends z.ZodType>(schema: S, description: string): ParamSpec<Optional<S>> {
  return { schema: schema.optional(), description, repeatable: false }
}

const INTEGER = /^(0|[1-9][0-9]*)$/
const BOOLEAN = /^(true|false)$/

/** Builders for the value rules the spec uses; each produces exact, human messages. */
export const param = {
  string(description: string, bounds: { min?: number; max?: number; pattern?: RegExp } = {}) {
    const min = bounds.min ?? 1
    let schema = z.string().min(min, `must be at least ${min} character${min === 1 ? '' : 's'} long`)
    if (bounds.max !== undefined)
      schema = schema.max(bounds.max, `must be at most ${bounds.max} characters long`)
    if (bounds.pattern) schema = schema.regex(bounds.pattern, `must match ${bounds.pattern.source}`)
    return spec(schema, description)
  },

  enumeration<const T extends readonly [string, ...string[]]>(values: T, description: string) {
    return spec(z.enum(values, { error: `must be one of ${values.join(', ')}` }), description)
  },

  integer(min: number, max: number, description: string) {
    const message = `must be an integer from ${min} to ${max}`
    return spec(
      z
        .string()
        .regex(INTEGER, message)
        .transform(Number)
        .pipe(z.number().int().min(min, message).max(max, message)),
      description,
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
    )
  },

  repeatable<S extends z.ZodType>(
    item: S,
    description: string,
    maxRepeats?: number,
  ): ParamSpec<Optional<z.ZodArray<S>>> {
    return { schema: z.array(item).optional(), description, repeatable: true, maxRepeats }
  },
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

/** Collects raw query values by name, keeping order and repeats. */
export function groupQuery(query: URLSearchParams): Map<string, string[]> {
  const grouped = new Map<string, string[]>()
  for (const [name, value] of query) {
    const values = grouped.get(name)
    if (values) values.push(value)
    else grouped.set(name, [value])
  }
  return grouped
}

function describeReceived(raw: unknown): string {
  if (raw === undefined) return ''
  const text = Array.isArray(raw) ? raw.join(', ') : String(raw)
  return ` (got "${text.length > 60 ? `${text.slice(0, 57)}...` : text}")`
}

/**
 * Checks names first (undeclared and repeated ones, all at once), then every value; returns the parsed
 * values or every issue found.
 */
export function checkParams<P extends ParamShape>(
  shape: P,
  raw: Map<string, string[]>,
): { ok: true; values: ParamValues<P> } | { ok: false; issues: ParamIssue[] } {
  const accepted = Object.keys(shape)
  const acceptedText =
    accepted.length > 0 ? `accepted parameters: ${accepted.join(', ')}` : 'this path takes no parameters'
  const nameIssues: ParamIssue[] = []
  for (const [name, values] of raw) {
    const declared = shape[name]
    if (!declared) {
      nameIssues.push({ path: [name], message: `Unknown parameter "${name}"; ${acceptedText}` })
    } else if (!declared.repeatable && values.length > 1) {
      nameIssues.push({ path: [name], message: `Parameter "${name}" is repeated; give it once` })
    }
  }
  if (nameIssues.length > 0) return { ok: false, issues: nameIssues }

  const issues: ParamIssue[] = []
  const values: Record<string, unknown> = {}
  for (const [name, declared] of Object.entries(shape)) {
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
    const result = declared.schema.safeParse(input)
    if (result.success) {
      values[name] = result.data
    } else {
      const first = result.error.issues[0]
      const message =
        input === undefined
          ? `Parameter "${name}" is required`
          : `"${name}" ${first?.message ?? 'is invalid'}${describeReceived(input)}`
      issues.push({ path: [name], message })
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, values: values as ParamValues<P> }
}
