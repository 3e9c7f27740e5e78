import { ID_PATTERN } from '../fhir/id.js'
import { isJsonObject as isObject } from '../jsonObject.js'
import { STATUSES } from './declaration.js'

/** R4's QuestionnaireItemType codes. */
const ITEM_TYPES = new Set([
  'group',
  'display',
  'question',
  'boolean',
  'decimal',
  'integer',
  'date',
  'dateTime',
  'time',
  'string',
  'text',
  'url',
  'choice',
  'open-choice',
  'attachment',
  'reference',
  'quantity',
])

/**
 * Why a record cannot be held as a Questionnaire, or undefined when it can: it must be an R4 Questionnaire
 * object with a `status`, string `id`, `url` and `version` where given, and items that each have a `linkId`
 * (used once in the whole form) and an R4 item type. Nothing else of it is judged: it is held as published.
 */
export function questionnaireFault(value: unknown): string | undefined {
  if (!isObject(value)) return 'not a JSON object'
  if (value.resourceType !== 'Questionnaire')
    return `not a Questionnaire (resourceType ${JSON.stringify(value.resourceType ?? null)})`
  if (value.status === undefined) return 'has no status'
  if (!(STATUSES as readonly unknown[]).includes(value.status))
    return `status ${JSON.stringify(value.status)} is not one of ${STATUSES.join(', ')}`
  if (value.id !== undefined && (typeof value.id !== 'string' || !ID_PATTERN.test(value.id)))
    return `not R4 JSON: id ${JSON.stringify(value.id)} is not a FHIR id`
  for (const member of ['url', 'version', 'name', 'title', 'publisher', 'date'])
    if (value[member] !== undefined && typeof value[member] !== 'string')
      return `not R4 JSON: ${member} must be a string`
  const seen = new Set<string>()
  const walk = (items: unknown, path: string): string | undefined => {
    if (items === undefined) return undefined
    if (!Array.isArray(items)) return `not R4 JSON: ${path} must be an array`
    for (const [position, item] of items.entries()) {
      const at = `${path}[${position}]`
      if (!isObject(item)) return `not R4 JSON: ${at} must be an object`
      if (typeof item.linkId !== 'string' || item.linkId === '') return `not R4 JSON: ${at} has no linkId`
      if (typeof item.type !== 'string' || !ITEM_TYPES.has(item.type))
        return `not R4 JSON: ${at} type ${JSON.stringify(item.type ?? null)} is not an R4 item type`
      if (seen.has(item.linkId)) return `linkId ${JSON.stringify(item.linkId)} is used more than once`
      seen.add(item.linkId)
      const inner = walk(item.item, `${at}.item`)
      if (inner) return inner
    }
    return undefined
  }
  return walk(value.item, 'item')
}
