import type { EndpointResponse } from '../api/endpoint.js'
import { ApiError } from '../http/errors.js'
import type { UpstreamSource } from '../upstream/client.js'

/**
 * Asks a remote terminology server and relays its answer: the expected resource with 200, or its
 * not-found OperationOutcome with 404. Anything else it says is unreadable here, so 502, never a guess.
 */
export async function forward(
  source: UpstreamSource,
  call: { path: string; body?: unknown; signal: AbortSignal },
  expected: 'Parameters' | 'ValueSet',
): Promise<EndpointResponse> {
  const answer = await source.fetchJson({
    method: call.body === undefined ? 'GET' : 'POST',
    path: call.path,
    body: call.body,
    signal: call.signal,
  })
  const type = (answer.body as { resourceType?: unknown } | null)?.resourceType
  if (answer.status === 200 && type === expected) return { body: answer.body }
  if (answer.status === 404 && type === 'OperationOutcome') return { status: 404, body: answer.body }
  throw new ApiError(502, {
    detail: `${source.name} answered ${answer.status} without a ${expected}.`,
  })
}

/** A query string from name/value pairs, repeats kept, undefined values left out. */
export function query(pairs: [string, string | undefined][]): string {
  const search = new URLSearchParams()
  for (const [name, value] of pairs) if (value !== undefined) search.append(name, value)
  return search.toString()
}
