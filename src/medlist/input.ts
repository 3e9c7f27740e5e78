import { ApiError, type ParamIssue } from '../http/errors.js'
import { isJsonObject as isObject, type JsonObject } from '../jsonObject.js'

export type Resource = JsonObject

/** Entries or parameters one call may carry (spec, Per-request bounds). */
export const MAX_RECORDS = 50_000

/** One resource of the input, where it was: its JSON path and, in a Bundle, its `fullUrl`. */
export interface InputRecord {
  type: string
  resource: Resource
  path: string
  fullUrl?: string
}

/**
 * The records of a body: a Bundle of any type (each entry's resource) or a Parameters whose parameters
 * named `record` each carry one resource. Every fault is named by its JSON path, never by a value.
 */
export function inputRecords(body: unknown): InputRecord[] {
  if (!isObject(body) || (body.resourceType !== 'Bundle' && body.resourceType !== 'Parameters'))
    throw ApiError.invalid([{ path: ['body'], message: 'must be a Bundle or a Parameters resource' }])
  const bundle = body.resourceType === 'Bundle'
  const items = bundle ? body.entry : body.parameter
  const list = bundle ? 'Bundle.entry' : 'Parameters.parameter'
  if (items !== undefined && !Array.isArray(items))
    throw ApiError.invalid([{ path: [list], message: 'must be an array' }])
  const given = (items ?? []) as unknown[]
  if (given.length > MAX_RECORDS)
    throw new ApiError(400, {
      detail: `The input holds ${given.length} ${bundle ? 'entries' : 'parameters'}; at most ${MAX_RECORDS} are taken.`,
      fhirCode: 'too-long',
    })
  const issues: ParamIssue[] = []
  const records: InputRecord[] = []
  given.forEach((item, index) => {
    const at = `${list}[${index}]`
    if (!isObject(item)) {
      issues.push({ path: [at], message: 'must be an object' })
      return
    }
    if (!bundle && item.name !== 'record') {
      issues.push({ path: [`${at}.name`], message: 'must be "record"' })
      return
    }
    const resource = item.resource
    if (!isObject(resource) || typeof resource.resourceType !== 'string') {
      issues.push({ path: [`${at}.resource`], message: 'must be a FHIR resource' })
      return
    }
    records.push({
      type: resource.resourceType,
      resource,
      path: `${at}.resource`,
      ...(bundle && typeof item.fullUrl === 'string' ? { fullUrl: item.fullUrl } : {}),
    })
  })
  if (issues.length > 0) throw ApiError.invalid(issues)
  return records
}

/** A reference's text, when the value is a Reference that has one. */
export const referenceOf = (value: unknown): string | undefined =>
  isObject(value) && typeof value.reference === 'string' ? value.reference : undefined

/** Finds the resource a reference names within the input: by `fullUrl`, by `Type/id`, or contained (`#id`). */
export class InputIndex {
  readonly #byKey = new Map<string, InputRecord>()

  constructor(records: readonly InputRecord[]) {
    for (const record of records) {
      if (record.fullUrl) this.#byKey.set(record.fullUrl, record)
      if (typeof record.resource.id === 'string')
        this.#byKey.set(`${record.type}/${record.resource.id}`, record)
    }
  }

  resolve(reference: string, from: Resource): Resource | undefined {
    if (reference.startsWith('#')) {
      const contained = Array.isArray(from.contained) ? from.contained : []
      return contained.find((item): item is Resource => isObject(item) && item.id === reference.slice(1))
    }
    const found =
      this.#byKey.get(reference) ?? this.#byKey.get(reference.replace(/^.*\/([A-Za-z]+\/[^/]+)$/, '$1'))
    return found?.resource
  }
}

/** How the output names an input record: its `fullUrl` where it has one, else `Type/id`. */
export const recordReference = (record: InputRecord): string | undefined =>
  record.fullUrl ??
  (typeof record.resource.id === 'string' ? `${record.type}/${record.resource.id}` : undefined)
