import { ApiError } from '../http/errors.js'
import { addressUrl } from './settings.js'
import { type UpstreamAnswer, UpstreamSource, type UpstreamTuning } from '../upstream/client.js'
import { isJsonObject as isObject } from '../jsonObject.js'

type Resource = Record<string, unknown>

/** A fetched resource answer larger than this is refused (502). */
const MAX_ANSWER_BYTES = 5 * 1024 * 1024

/** A Questionnaire as a source sent it, with the validators to revalidate it by. */
export interface FetchedQuestionnaire {
  bytes: Buffer
  resource: Resource
  etag?: string
  lastModified?: string
}

/** What a source said: not there (404, empty searchset), unchanged since the validators, or these. */
export type SourceAnswer =
  { kind: 'none' } | { kind: 'unchanged' } | { kind: 'found'; questionnaires: FetchedQuestionnaire[] }

export interface Validators {
  etag?: string
  lastModified?: string
}

/** One configured address: a FHIR base searched by `url`, or a prefix under which canonicals answer themselves. */
export interface QuestionnaireAddress {
  kind: 'fhir' | 'prefix'
  /** What the operator listed, for `svc questionnaires list`; never shown to a caller. */
  address: string
  /** Its URL (without `fhir+`): canonicals under it are asked of it. */
  base: string
  source: UpstreamSource
}

const header = (answer: UpstreamAnswer, name: string) => {
  const value = answer.headers[name]
  return typeof value === 'string' ? value : undefined
}

/** Whether `url` lies under `prefix` by whole path segments, same scheme and host. */
export function under(url: string, prefix: string): boolean {
  let target: URL
  let base: URL
  try {
    target = new URL(url)
    base = new URL(prefix)
  } catch {
    return false
  }
  if (target.origin !== base.origin || target.username || target.password) return false
  const path = base.pathname.replace(/\/+$/, '')
  return target.pathname === path || target.pathname.startsWith(`${path}/`)
}

/**
 * The addresses the operator configured. A canonical under none of them is never fetched: the service is
 * not a way to reach arbitrary hosts. Each source follows the upstream rules (src/upstream/client.ts), stays
 * within its own address (redirects included) and takes at most 5 MiB an answer.
 */
export class QuestionnaireSources {
  readonly addresses: QuestionnaireAddress[]

  constructor(addresses: readonly string[], tuning: UpstreamTuning & { timeoutMs: number }) {
    this.addresses = addresses.map((address) => {
      const base = addressUrl(address)
      return {
        kind: base === address ? 'prefix' : 'fhir',
        address,
        base,
        source: new UpstreamSource({
          ...tuning,
          baseUrl: base,
          name: 'The questionnaire source',
          maxAnswerBytes: MAX_ANSWER_BYTES,
        }),
      }
    })
  }

  /** The configured address a canonical lies under, if any. */
  addressOf(canonical: string): QuestionnaireAddress | undefined {
    return this.addresses.find((address) => under(canonical, address.base))
  }

  /** Asks the address for a canonical (conditionally, given validators); only Questionnaires with that url are taken. */
  async fetch(
    address: QuestionnaireAddress,
    canonical: string,
    validators: Validators | undefined,
    signal: AbortSignal,
  ): Promise<SourceAnswer> {
    const path =
      address.kind === 'fhir'
        ? `Questionnaire?${new URLSearchParams({ url: canonical })}`
        : address.source.relative(address.source.resolve(canonical))
    const answer = await address.source.fetchJson({
      path,
      signal,
      headers: {
        ...(validators?.etag ? { 'if-none-match': validators.etag } : {}),
        ...(validators?.lastModified ? { 'if-modified-since': validators.lastModified } : {}),
      },
    })
    if (answer.status === 304) return { kind: 'unchanged' }
    if (answer.status === 404 || answer.status === 410) return { kind: 'none' }
    const kept = { etag: header(answer, 'etag'), lastModified: header(answer, 'last-modified') }
    const wrong = () =>
      new ApiError(502, {
        detail:
          'The questionnaire source answered something other than a Questionnaire with the url asked for.',
      })
    if (address.kind === 'prefix') {
      const resource = answer.body
      if (!isObject(resource) || resource.resourceType !== 'Questionnaire' || resource.url !== canonical)
        throw wrong()
      return { kind: 'found', questionnaires: [{ bytes: answer.bytes, resource, ...kept }] }
    }
    const bundle = answer.body
    if (!isObject(bundle) || bundle.resourceType !== 'Bundle') throw wrong()
    const resources = (Array.isArray(bundle.entry) ? bundle.entry : [])
      .filter((entry) => !isObject(entry) || !isObject(entry.search) || entry.search.mode !== 'include')
      .map((entry) => (isObject(entry) ? entry.resource : undefined))
    if (
      resources.some(
        (resource) =>
          !isObject(resource) || resource.resourceType !== 'Questionnaire' || resource.url !== canonical,
      )
    )
      throw wrong()
    if (resources.length === 0) return { kind: 'none' }
    return {
      kind: 'found',
      questionnaires: (resources as Resource[]).map((resource) => ({
        // An entry's bytes cannot be cut out of the searchset: its members are kept as published, in order.
        bytes: Buffer.from(JSON.stringify(resource)),
        resource,
        ...kept,
      })),
    }
  }
}
