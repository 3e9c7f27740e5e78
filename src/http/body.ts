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

/**
 * Reads a JSON request body, refusing a non-JSON content type (415) and stopping at `maxBytes` while
 * reading (413), so an oversized or endless body is never buffered.
 */
export async function readJsonBody(ctx: Context, maxBytes: number): Promise<unknown> {
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
  try {
    text = await getRawBody(ctx.req, { limit: maxBytes, length: ctx.request.length, encoding: 'utf8' })
  } catch (error) {
    const type = (error as { type?: string }).type
    if (type === 'entity.too.large') {
      throw new ApiError(413, { detail: `The body exceeds the limit of ${maxBytes} bytes.` })
    }
    throw ApiError.invalid([{ path: ['body'], message: 'The body could not be read in full' }])
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw ApiError.invalid(
      [{ path: ['body'], message: `The body is not valid JSON: ${(error as Error).message}` }],
      'The body is not valid JSON.',
    )
  }
}
