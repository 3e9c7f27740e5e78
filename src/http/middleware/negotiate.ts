import type { Middleware } from 'koa'
import Negotiator from 'negotiator'
import { ApiError } from '../errors.js'
import type { RequestState } from '../state.js'

const FHIR_JSON = 'application/fhir+json'
/** The concrete JSON media types served; `application/*` and `*` wildcards in Accept match them. */
const FHIR_OFFERS = [FHIR_JSON, 'application/json', 'application/json+fhir', 'text/json']
const API_OFFERS = ['application/json', FHIR_JSON, 'application/json+fhir', 'text/json']
const FORMAT_ALIASES: Record<string, string> = { json: FHIR_JSON }
const SERVED_FHIR_VERSIONS = new Set(['4.0', '4.0.1'])
const FHIR_VERSION = /;\s*fhirVersion\s*=\s*"?([^;"\s]+)"?/i
const ANY_FHIR_VERSION = /;\s*fhirVersion\s*=\s*"?[^;"\s]+"?/gi

/**
 * Drops media ranges that ask for a FHIR release we do not serve and strips the served release's
 * parameter, so the remaining ranges can be matched against plain media types. FHIR base only: elsewhere
 * a fhirVersion parameter is just a parameter of the range.
 */
function stripFhirVersions(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const version = FHIR_VERSION.exec(range)?.[1]
      if (version === undefined) return range
      return SERVED_FHIR_VERSIONS.has(version) ? range.replace(FHIR_VERSION, '') : ''
    })
    .filter((range) => range.trim() !== '')
    .join(',')
}

function notAcceptable(asked: string): ApiError {
  return new ApiError(406, {
    detail: `${asked} admits no JSON media type served here; accept application/json or application/fhir+json (FHIR release 4.0).`,
  })
}

/**
 * The media type a FHIR base answer is sent as when `_format` asks for one, or 406. A batch entry's
 * `_format` goes through this too, so an entry answers as the same request alone would.
 */
export function formatMediaType(format: string): string {
  const asked = FORMAT_ALIASES[format] ?? stripFhirVersions(format).trim()
  if (!FHIR_OFFERS.includes(asked)) throw notAcceptable(`_format=${format}`)
  return asked
}

/** The `_format` values of a raw query string; a repeated one is refused later, by the parameter check. */
export function formatOf(querystring: string): string | null {
  return querystring.includes('_format') ? new URLSearchParams(querystring).get('_format') : null
}

/**
 * Picks the response media type from `_format` (FHIR base only) or Accept; 406 when neither admits JSON.
 * Runs after the key check: a caller without a key learns it needs one before anything else.
 */
const isHtmlPage = (path: string) => path === '/' || path === '/docs' || path.startsWith('/docs/')

export function negotiate(): Middleware<RequestState> {
  return (ctx, next) => {
    // Human documentation pages are HTML; browsers' Accept headers must not be refused there.
    if (ctx.state.base === 'open' && isHtmlPage(ctx.request.path)) return next()
    const fhir = ctx.state.base === 'fhir'
    const offers = fhir ? FHIR_OFFERS : API_OFFERS
    const format = fhir ? formatOf(ctx.request.querystring) : null
    if (format !== null) {
      ctx.state.mediaType = formatMediaType(format)
      return next()
    }
    const accept = ctx.request.get('Accept').trim()
    if (accept === '' || accept === '*/*') {
      ctx.state.mediaType = offers[0] as string
    } else if (offers.includes(accept)) {
      // One plain media type we serve, as most clients send: Negotiator would parse it to the same answer.
      ctx.state.mediaType = accept
    } else {
      const ranges = fhir ? stripFhirVersions(accept) : accept.replace(ANY_FHIR_VERSION, '')
      const preferred = new Negotiator({ headers: { accept: ranges } }).mediaType(offers)
      if (!preferred) throw notAcceptable(`Accept: ${accept.slice(0, 100)}`)
      ctx.state.mediaType = preferred
    }
    return next()
  }
}
