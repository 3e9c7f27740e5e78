import type { ParamIssue } from '../http/errors.js'
import type { ParamShape, RawParams } from './params.js'

/**
 * value[x] types whose JSON value is read as its string form, so a URL rule checks it alike, with the JSON
 * type FHIR gives each in: `valueUri: 5` or `valueInteger: "5"` is not R4 JSON.
 */
const PRIMITIVE_VALUES = new Map<string, 'string' | 'number' | 'boolean'>([
  ['valueString', 'string'],
  ['valueCode', 'string'],
  ['valueUri', 'string'],
  ['valueUrl', 'string'],
  ['valueCanonical', 'string'],
  ['valueId', 'string'],
  ['valueOid', 'string'],
  ['valueUuid', 'string'],
  ['valueMarkdown', 'string'],
  ['valueInteger', 'number'],
  ['valueUnsignedInt', 'number'],
  ['valuePositiveInt', 'number'],
  ['valueDecimal', 'number'],
  ['valueBoolean', 'boolean'],
  ['valueDate', 'string'],
  ['valueDateTime', 'string'],
  ['valueInstant', 'string'],
  ['valueTime', 'string'],
])

const VALUE_KEY = /^value[A-Z]/

/**
 * Reads a FHIR Parameters body into raw parameter values by name, as the URL's are read. Names are
 * checked here (a Parameters resource, each item with a declared name); values by the declared rules.
 * A body parameter without a value, or with a value of a type its declaration does not take, is a
 * value issue named after the parameter.
 */
export function readParametersBody(
  body: unknown,
  shape: ParamShape,
): { raw: RawParams; nameIssues: ParamIssue[]; valueIssues: ParamIssue[] } {
  const raw: RawParams = new Map()
  const nameIssues: ParamIssue[] = []
  const valueIssues: ParamIssue[] = []
  const resource = body as { resourceType?: unknown; parameter?: unknown } | null
  if (typeof resource !== 'object' || resource === null || resource.resourceType !== 'Parameters') {
    nameIssues.push({ path: ['body'], message: 'The body must be a Parameters resource' })
    return { raw, nameIssues, valueIssues }
  }
  const items = resource.parameter ?? []
  if (!Array.isArray(items)) {
    nameIssues.push({ path: ['parameter'], message: 'Parameters.parameter must be an array' })
    return { raw, nameIssues, valueIssues }
  }
  const accepted = Object.keys(shape).filter((name) => !name.startsWith('_'))
  items.forEach((item: unknown, index) => {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>
    const name = entry.name
    if (typeof name !== 'string' || name === '') {
      nameIssues.push({ path: [`parameter[${index}]`], message: `parameter[${index}] needs a name` })
      return
    }
    const declared = shape[name]
    if (!declared || name.startsWith('_')) {
      nameIssues.push({
        path: [name],
        message: `Unknown parameter "${name}" in the body; accepted parameters: ${accepted.join(', ')}`,
      })
      return
    }
    // A null value is a missing value, not the text "null".
    const valueKeys = Object.keys(entry).filter(
      (key) => VALUE_KEY.test(key) && entry[key] !== null && entry[key] !== undefined,
    )
    if (valueKeys.length !== 1) {
      valueIssues.push({
        path: [name],
        message:
          valueKeys.length === 0
            ? `Parameter "${name}" in the body needs a value`
            : `Parameter "${name}" in the body has several values (${valueKeys.join(', ')}); give one`,
      })
      return
    }
    const key = valueKeys[0] as string
    const wanted = declared.bodyType === 'primitive' ? undefined : `value${declared.bodyType}`
    const jsonType = PRIMITIVE_VALUES.get(key)
    const fits = wanted ? key === wanted : jsonType !== undefined
    if (!fits) {
      valueIssues.push({
        path: [name],
        message: `Parameter "${name}" takes ${wanted ?? 'a primitive value (valueString, valueCode, ...)'}, not ${key}`,
      })
      return
    }
    const value = entry[key]
    if (!wanted && typeof value !== jsonType) {
      valueIssues.push({
        path: [name],
        message: `Parameter "${name}" has ${key} ${JSON.stringify(value).slice(0, 60)}: FHIR JSON gives ${key} as a ${jsonType}`,
      })
      return
    }
    raw.set(name, [
      ...(raw.get(name) ?? []),
      wanted || typeof value === 'string' ? value : JSON.stringify(value),
    ])
  })
  return { raw, nameIssues, valueIssues }
}

/** Parameters from the URL and from a body, together: a name given in both counts as repeated. */
export function mergeRaw(first: RawParams, second: RawParams): RawParams {
  const merged: RawParams = new Map()
  for (const source of [first, second]) {
    for (const [name, values] of source) merged.set(name, [...(merged.get(name) ?? []), ...values])
  }
  return merged
}
