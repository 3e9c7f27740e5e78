/**
 * Which base a request path belongs to: the FHIR base, the rest of the keyed API (`/v1`), or the open
 * pages (`/openapi.json`, `/docs`). Decided once per request, on the path's canonical form, so that every
 * spelling of a keyed path (`/V1/...`, `/v1/%73cheduling`, `//v1/./x`, `/v1/fhir/r4/../r4`) needs a key
 * and answers in its base's shape. Routing itself matches the path exactly: a spelling that is not a served
 * path is a 404 in its base's shape, after the key check.
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

const within = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

/** Spellings that only a canonical form can place: escapes, backslashes, repeated slashes, dot segments. */
const UNUSUAL = /%|\\|\/\/|\/\.\.?(\/|$)/

export function pathBase(path: string): PathBase {
  const canonical = UNUSUAL.test(path) ? canonicalPath(path) : path.toLowerCase()
  if (within(canonical, FHIR_BASE)) return 'fhir'
  if (within(canonical, API_PREFIX)) return 'api'
  return 'open'
}
