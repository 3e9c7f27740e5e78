/**
 * Entity tags and If-None-Match (RFC 9110 §8.8.3, §13.1.2). An answer sent whole and the same answer
 * gzipped are two representations: they never share a strong tag, so each coding has its own, and a
 * conditional request carrying either one revalidates the answer.
 */

const GZIP_SUFFIX = '-gzip'

/** The strong tag of one coding of an answer whose content hash is `hash`. */
export function entityTag(hash: string, gzipped: boolean): string {
  return `"${hash}${gzipped ? GZIP_SUFFIX : ''}"`
}

/**
 * Whether `If-None-Match` names the answer: `*`, or a list of tags any of which matches either coding's
 * tag by weak comparison (a `W/` prefix is ignored). A `Cache-Control: no-cache` or `Pragma: no-cache` of
 * the request does not change this: it asks caches to revalidate with the origin, which is what a
 * conditional request to the origin does (browsers and Node's fetch send both with an If-None-Match).
 */
export function matchesIfNoneMatch(header: string, hash: string): boolean {
  const trimmed = header.trim()
  if (trimmed === '') return false
  if (trimmed === '*') return true
  for (const raw of trimmed.split(',')) {
    const tag = raw.trim().replace(/^W\//, '')
    if (!tag.startsWith('"') || !tag.endsWith('"')) continue
    const opaque = tag.slice(1, -1)
    if (opaque === hash || opaque === `${hash}${GZIP_SUFFIX}`) return true
  }
  return false
}
