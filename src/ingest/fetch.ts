import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { Agent, type Dispatcher, request } from 'undici'
import { UserError } from '../userError.js'
import { isInternalAddress } from './addresses.js'

/**
 * Fetching what third parties publish, where the URL may come from a document we fetched (a publisher's
 * manifest naming its files, a redirect): such a URL must be http or https (never a local file or device),
 * and may reach a loopback, private, link-local or cloud-metadata address only when the document itself came
 * from one (the operator's own network) or its host is in SVC_FETCH_ALLOW_HOSTS. The address is checked when
 * the connection opens, on what the name resolved to, so DNS rebinding cannot pass it. Redirects are followed
 * here, at most MAX_REDIRECTS, each hop under the same rule.
 */

export class FetchRefused extends UserError {
  override name = 'FetchRefused'
}

export const MAX_REDIRECTS = 5

/** What one fetch may reach. */
export interface FetchPolicy {
  /** The URL's own host was named by the operator (trusted as typed: any address). */
  operatorUrl: boolean
  /** The document that named this URL came from an internal address: internal addresses stay allowed. */
  fromInternal: boolean
  allowHosts: readonly string[]
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase()

function checkScheme(url: URL, what: string): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchRefused(`${what} ${url.protocol}// is refused: only http and https are fetched`)
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/** A resolver for one hop: refuses internal addresses unless allowed, and says which address was used. */
function guardedLookup(internalAllowed: boolean, used: (address: string) => void) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const found = addresses as LookupAddress[]
      const refused = !internalAllowed && found.some((entry) => isInternalAddress(entry.address))
      if (refused) {
        const denied = new Error(
          `${hostname} resolves to an address on a private network, which a URL from a fetched document may not reach (list the host in SVC_FETCH_ALLOW_HOSTS to allow it)`,
        ) as NodeJS.ErrnoException
        denied.code = 'EREFUSED_INTERNAL'
        return callback(denied, [])
      }
      const first = found[0]
      if (first) used(first.address)
      if (options.all) callback(null, found)
      else callback(null, first?.address ?? '', first?.family)
    })
  }
}

export interface SafeResponse {
  statusCode: number
  headers: Dispatcher.ResponseData['headers']
  body: Dispatcher.ResponseData['body']
  /** Where the answer came from, after redirects. */
  url: URL
  /** Whether that address is internal: URLs the answer names may then stay on the operator's network. */
  fromInternal: boolean
}

/**
 * GET `url` under `policy`, following redirects. The answer's body must be consumed or dumped; its
 * connection is closed with it.
 */
export async function safeFetch(
  url: URL,
  policy: FetchPolicy,
  init: {
    headers?: Record<string, string>
    signal?: AbortSignal
    headersTimeout?: number
    bodyTimeout?: number
  },
): Promise<SafeResponse> {
  // Credentials written in the URL (`user:pass@`) go as HTTP Basic, to that origin only.
  let current = new URL(url)
  const credentialsFor = current.origin
  const basic =
    current.username || current.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(current.username)}:${decodeURIComponent(current.password)}`).toString('base64')}`
      : undefined
  current.username = ''
  current.password = ''
  let operatorUrl = policy.operatorUrl
  let fromInternal = policy.fromInternal
  for (let hop = 0; ; hop++) {
    checkScheme(current, hop === 0 ? 'A URL of scheme' : 'A redirect to scheme')
    const host = hostOf(current)
    const internalAllowed = operatorUrl || fromInternal || policy.allowHosts.includes(host)
    let address = isIP(host) ? host : ''
    if (address !== '' && !internalAllowed && isInternalAddress(address)) {
      throw new FetchRefused(
        `${current.origin} is on a private network, which a URL from a fetched document may not reach (list the host in SVC_FETCH_ALLOW_HOSTS to allow it)`,
      )
    }
    const agent = new Agent({
      connect: {
        lookup: guardedLookup(internalAllowed, (used) => {
          address = used
        }) as never,
      },
    })
    let response: Dispatcher.ResponseData
    try {
      response = await request(current, {
        headers:
          basic && current.origin === credentialsFor
            ? { ...init.headers, authorization: basic }
            : init.headers,
        signal: init.signal,
        headersTimeout: init.headersTimeout,
        bodyTimeout: init.bodyTimeout,
        dispatcher: agent,
      })
    } catch (error) {
      void agent.close()
      const cause = (error as { cause?: NodeJS.ErrnoException }).cause
      if (
        (error as NodeJS.ErrnoException).code === 'EREFUSED_INTERNAL' ||
        cause?.code === 'EREFUSED_INTERNAL'
      )
        throw new FetchRefused((cause ?? (error as Error)).message)
      throw error
    }
    response.body.once('close', () => void agent.close())
    const location = response.headers.location
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump()
      if (hop >= MAX_REDIRECTS)
        throw new FetchRefused(`${url.href} redirects more than ${MAX_REDIRECTS} times`)
      // The next URL comes from this answer: it may stay internal only if this answer came from there.
      fromInternal = address !== '' && isInternalAddress(address)
      operatorUrl = false
      current = new URL(location, current)
      continue
    }
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
      url: current,
      fromInternal: address !== '' && isInternalAddress(address),
    }
  }
}
