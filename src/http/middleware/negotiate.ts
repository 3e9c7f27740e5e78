import type { Middleware } from 'koa'
import Negotiator from 'negotiator'
import { ApiError, errorShapeFor } from '../errors.js'
import type { RequestState } from '../state.js'

const FHIR_JSON = 'application/fhir+json'
/** The concrete JSON media types served; `application/*` and `*` wildcards in Accept match them. */
const FHIR_OFFERS = [FHIR_JSON, 'application/json', 'application/json+fhir', 'text/json']
const API_OFFERS = ['application/json', FHIR_JSON, 'application/json+fhir', 'text/json']
const FORMAT_ALIASES: Record<string, string> = { json: FHIR_JSON }
const SERVED_FHIR_VERSIONS = new Set(['4.0', '4.0.1'])

/**
 * Drops media ranges that ask for a FHIR release we do not serve and strips the served release's
 * parameter, so the remaining ranges can be matched against plain media types.
 */
function stripFhirVersions(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const version = /;\s*fhirVersion\s*=\s*"?([^;"\s]+)"?/i.exec(range)?.[1]
      if (version === undefined) return range
      return SERVED_FHIR_VERSIONS.has(version) ? range.replace(/;\s*fhirVersion\s*=\s*"?[^;"\s]+"?/i, '') : ''
    })
    .filter((range) => range.trim() !== '')
    .join(',')
}

function notAcceptable(asked: string): ApiError {
  return new ApiError(406, {
    detail: `${asked} admits no JSON media type served here; accept application/json or application/fhir+json (FHIR release 4.0).`,
  })
}

/** Picks the response media type from `_format` (FHIR base only) or Accept; 406 when neither admits JSON. */
export function negotiate(): Middleware<RequestState> {
  return (ctx, next) => {
    const fhir = errorShapeFor(ctx.request.path) === 'fhir'
    ctx.state.shape = fhir ? 'fhir' : 'problem'
    // Human documentation pages are HTML; browsers' Accept headers must not be refused there.
    if (ctx.request.path.startsWith('/docs/')) return next()
    const offers = fhir ? FHIR_OFFERS : API_OFFERS
    const format = fhir ? new URLSearchParams(ctx.request.querystring).get('_format') : null
    if (format !== null) {
      const asked = FORMAT_ALIASES[format] ?? stripFhirVersions(format).trim()
      if (!FHIR_OFFERS.includes(asked)) throw notAcceptable(`_format=${format}`)
      ctx.state.mediaType = asked
    } else {
      const accept = ctx.request.get('Accept').trim()
      if (accept === '' || accept === '*/*') {
        ctx.state.mediaType = offers[0] as string
      } else if (offers.includes(accept)) {
        // One plain media type we serve, as most clients send: Negotiator would parse it to the same answer.
        ctx.state.mediaType = accept
      } else {
        const preferred = new Negotiator({ headers: { accept: stripFhirVersions(accept) } }).mediaType(offers)
        if (!preferred) throw notAcceptable(`Accept: ${accept.slice(0, 100)}`)
        ctx.state.mediaType = preferred
      }
    }
    return next()
  }
}
