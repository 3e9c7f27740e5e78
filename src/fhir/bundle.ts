import { FHIR_BASE } from '../http/errors.js'
import type { KeptText } from '../http/gzipSplice.js'
import { SplicedJson } from '../http/json.js'
import { idOf, type SourcedResource, StoredJson, typeOf } from './store/stored.js'

type Resource = Record<string, unknown>

export interface SearchsetInput {
  /** Public base URL of the service, without the FHIR base path. */
  baseUrl: string
  self: string
  next?: string
  total?: number
  matches: readonly SourcedResource[]
  /** Per match, extensions of its entry's `search` (how it matched). */
  marks?: readonly (readonly Resource[] | undefined)[]
  /** Entries added by `_include`: they do not count toward `_count`. */
  includes?: readonly SourcedResource[]
}

/** The absolute address of a resource under this service's FHIR base. */
export const fullUrlOf = (baseUrl: string, resource: SourcedResource) =>
  `${baseUrl}${FHIR_BASE}/${typeOf(resource)}/${idOf(resource)}`

/**
 * A FHIR searchset Bundle as the spec shapes it: self/next links, match then include entries. Spliced as
 * JSON text: a stored resource goes in as the bytes it was published as.
 */
export function searchsetBundle(input: SearchsetInput): SplicedJson {
  const pieces: (string | Buffer | KeptText)[] = []
  let text = `{"resourceType":"Bundle","type":"searchset",${input.total !== undefined ? `"total":${input.total},` : ''}"link":${JSON.stringify(
    [
      { relation: 'self', url: input.self },
      ...(input.next !== undefined ? [{ relation: 'next', url: input.next }] : []),
    ],
  )},"entry":[`
  let entries = 0
  const entry = (mode: 'match' | 'include', resource: SourcedResource, extension?: readonly Resource[]) => {
    text += `${entries++ > 0 ? ',' : ''}{"fullUrl":${JSON.stringify(fullUrlOf(input.baseUrl, resource))},"resource":`
    if (resource instanceof StoredJson) {
      pieces.push(text, resource.spliceable())
      text = ''
    } else {
      text += JSON.stringify(resource)
    }
    text += `,"search":${JSON.stringify(extension ? { extension, mode } : { mode })}}`
  }
  input.matches.forEach((resource, index) => entry('match', resource, input.marks?.[index]))
  for (const resource of input.includes ?? []) entry('include', resource)
  pieces.push(`${text}]}`)
  return new SplicedJson(pieces)
}
