/**
 * Which base a request path belongs to: the FHIR base, the rest of the keyed API (`/v1`), or the open
 * pages (`/openapi.json`, `/docs`). Decided once per request, on the path's canonical form, so that every
 * spelling of a keyed path (`/V1/...`, `/v1/%73cheduling`, `//v1/./x`, `/v1/fhir/r4/../r4`) needs a key
 * and answers in its base's shape. Routing matches the path as sent but for escapes of route characters
 * (`routingPath`): another spelling (case, dot segments, repeated slashes) is a 404 in its base's shape,
 * after the key check.
 */
export type PathBase = 'fhir' | 'api' | 'open'

const API_PREFIX = '/v1'
export const FHIR_BASE = '/v1/fhir/r4'

function decodeEscapes(path: string): string {
  if (!path.includes('%')) return path
  // Decoded repeatedly so that a double-encoded spelling (%2573) cannot hide a segment; a malformed escape
  // is left as written (its path matches no route).
  let current = path
  for (let round = 0; round < 3 && current.includes('%'); round++) {
    let next: string
    try {
      next = decodeURIComponent(current)
    } catch {
      return current
    }
    if (next === current) break
    current = next
  }
  return current
}

/** The path with escapes decoded, backslashes and repeated slashes as one slash, dot segments resolved, case folded. */
export function canonicalPath(path: string): string {
  const segments: string[] = []
  for (const segment of decodeEscapes(path).replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }
  return `/${segments.join('/')}`.toLowerCase()
}

/** A character a route's literal segments may hold: RFC 3986's unreserved ones, and `$` of FHIR operations. */
const ROUTE_CHARACTER = /^[A-Za-z0-9\-._~$]$/

/**
 * The path with each escape of a route character decoded (`%24lookup` is `$lookup`, as clients that escape
 * every segment send it; `%6D` is `m`), the others left as written: an escaped `/` or `%` is data, never a
 * segment's end or another escape. Path parameters are decoded from this as from the path sent.
 */
export function routingPath(path: string): string {
  if (!path.includes('%')) return path
  return path.replace(/%[0-9A-Fa-f]{2}/g, (escape) => {
    const character = String.fromCharCode(Number.parseInt(escape.slice(1), 16))
    return ROUTE_CHARACTER.test(character) ? character : escape
  })
}

const within = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

/** Spellings that only a canonical form can place: escapes, backslashes, repeated slashes, dot segments. */
const UNUSUAL = /%|\\|\/\/|\/\.\.?(\/|$)/

export function pathBase(path: string): PathBase {
  const canonical = UNUSUAL.test(path) ? canonicalPath(path) : path.toLowerCase()
  if (within(canonical, FHIR_BASE)) return 'fhir'
  if (within(canonical, API_PREFIX)) return 'api'
  return 'open'
}
