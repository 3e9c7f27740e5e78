import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { ApiError } from './errors.js'

const JSON_TYPES = [
  'application/json',
  'application/fhir+json',
  'application/json+fhir',
  'text/json',
  '+json',
]

/** How long a request body may take to arrive whole, from the time it is first read. */
export const BODY_TIMEOUT_MS = 30_000

class BodyTimeout extends Error {}

/**
 * Reads a JSON request body, refusing a non-JSON content type (415), stopping at `maxBytes` while reading
 * (413), so an oversized or endless body is never buffered, and at `timeoutMs` (408: a client that trickles
 * its body holds no connection for long; the connection is then closed).
 */
export async function readJsonBody(
  ctx: Context,
  maxBytes: number,
  timeoutMs = BODY_TIMEOUT_MS,
): Promise<unknown> {
  if (!ctx.request.length && !ctx.get('Transfer-Encoding')) {
    throw ApiError.invalid(
      [{ path: ['body'], message: 'A JSON body is required' }],
      'The request has no body.',
    )
  }
  if (!ctx.is(JSON_TYPES)) {
    throw new ApiError(415, {
      detail: `The body must be JSON (Content-Type application/fhir+json or application/json); got ${ctx.get('Content-Type') || 'no Content-Type'}.`,
    })
  }
  let text: string
  let timer: NodeJS.Timeout | undefined
  try {
    text = await Promise.race([
      getRawBody(ctx.req, { limit: maxBytes, length: ctx.request.length, encoding: 'utf8' }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new BodyTimeout()), timeoutMs)
      }),
    ])
  } catch (error) {
    if (error instanceof BodyTimeout) {
      ctx.set('Connection', 'close')
      throw new ApiError(408, {
        detail: `The body did not arrive whole within ${timeoutMs / 1000} s; send it at once.`,
      })
    }
    const type = (error as { type?: string }).type
    if (type === 'entity.too.large') {
      throw new ApiError(413, { detail: `The body exceeds the limit of ${maxBytes} bytes.` })
    }
    throw ApiError.invalid([{ path: ['body'], message: 'The body could not be read in full' }])
  } finally {
    clearTimeout(timer)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    // The parser's message quotes the text around the fault: it could be anyone's data, so only where.
    const at = /position (\d+)/.exec((error as Error).message)?.[1]
    throw ApiError.invalid(
      [{ path: ['body'], message: `The body is not valid JSON${at ? ` (at character ${at})` : ''}` }],
      'The body is not valid JSON.',
    )
  }
}
