import type { Terminology } from './terminology.js'
import { ApiError } from '../http/errors.js'
import type { UpstreamSource } from '../upstream/client.js'
import { RECOGNISED_SYSTEMS } from './recognised.js'
import { type CodeSystemRow, codeSystemVersions } from './store.js'

export type Resolved = { kind: 'local'; system: CodeSystemRow } | { kind: 'remote'; source: UpstreamSource }

export function notServed(url: string, parameter: string): ApiError {
  const known = RECOGNISED_SYSTEMS.get(url)
  if (known) {
    return new ApiError(503, {
      detail:
        `${known} (${url}) is recognised, but this deployment has no source for it: ` +
        'an operator can import a release or configure a remote terminology source.',
      fhirCode: 'not-supported',
      issues: [{ path: [parameter], message: `No source for ${known} (${url})` }],
    })
  }
  return new ApiError(404, {
    detail: `No code system ${url} is served here; GET /v1/fhir/r4/metadata?mode=terminology lists those that are.`,
    issues: [{ path: [parameter], message: `Unknown code system ${url}` }],
  })
}

/**
 * Where answers about a code system come from: its configured remote source first (the operator chose
 * it), then the release held in the store. Throws 404 for an unknown system or release, and 503
 * `not-supported` for a recognised one without a source.
 */
export function resolveCodeSystem(
  terminology: Terminology,
  url: string,
  version: string | undefined,
  parameter: string,
): Resolved {
  const source = terminology.sources.get(url)
  if (source) return { kind: 'remote', source }
  const system = terminology.releases.codeSystem(url, version)
  if (system) return { kind: 'local', system }
  if (version !== undefined) {
    const versions = codeSystemVersions(terminology.db, url)
    if (versions.length > 0) {
      throw new ApiError(404, {
        detail: `Code system ${url} is not held at release ${version}; held: ${versions.join(', ')}.`,
        issues: [{ path: ['version'], message: `Unknown release ${version} of ${url}` }],
      })
    }
  }
  throw notServed(url, parameter)
}
