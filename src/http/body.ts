import type { Readable, Transform } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
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

/** The content codings a body may arrive in besides identity: the ones HTTP clients compress with. */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
}
const READABLE_CODINGS = 'gzip, deflate, br'

/**
 * The body as the caller meant it: decoded when it was sent compressed (415 for a coding svc does not
 * read). A compressed body more than `maxBytes` long is refused before it is read.
 */
function decodedBody(ctx: Context, coding: string, maxBytes: number): Readable {
  if (coding === 'identity') return ctx.req
  const makeDecoder = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined
  if (!makeDecoder) {
    throw new ApiError(415, {
      detail: `The body's Content-Encoding ${JSON.stringify(coding)} is not one svc reads; send it uncompressed or as gzip, deflate or br.`,
      // RFC 9110 12.5.3: the codings that would have been read.
      headers: { 'Accept-Encoding': READABLE_CODINGS },
    })
  }
  if ((ctx.request.length ?? 0) > maxBytes) tooLarge(maxBytes)
  const decoder = makeDecoder()
  // Not stream.pipeline: a fault in the compressed bytes must not destroy the socket the answer goes out on.
  ctx.req.on('error', (error) => decoder.destroy(error))
  return ctx.req.pipe(decoder)
}

function tooLarge(maxBytes: number): never {
  throw new ApiError(413, { detail: `The body exceeds the limit of ${maxBytes} bytes.` })
}

/**
 * Reads a JSON request body, refusing a non-JSON content type or a charset other than UTF-8 (415), stopping
 * at `maxBytes` of the decompressed body while reading (413), so an oversized or endless body is never
 * buffered, and at `timeoutMs` (408: a client that trickles its body holds no connection for long; the
 * connection is then closed).
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
  const charset = ctx.request.charset
  // JSON between systems is UTF-8 (RFC 8259 8.1; FHIR's http page): a body declared in another charset would
  // otherwise be read as UTF-8 and answered as not JSON.
  if (charset && !/^utf-?8$/i.test(charset)) {
    throw new ApiError(415, {
      detail: `The body must be JSON in UTF-8; got charset=${charset}.`,
    })
  }
  const coding = ctx.get('Content-Encoding').trim().toLowerCase() || 'identity'
  const body = decodedBody(ctx, coding, maxBytes)
  let text: string
  let timer: NodeJS.Timeout | undefined
  try {
    text = await Promise.race([
      getRawBody(body, {
        limit: maxBytes,
        // The declared length is the compressed one when a coding applies.
        length: coding === 'identity' ? ctx.request.length : undefined,
        encoding: 'utf8',
      }),
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
    // What is left of compressed bytes is not read: the connection cannot be used again.
    if (coding !== 'identity') ctx.set('Connection', 'close')
    if ((error as { type?: string }).type === 'entity.too.large') tooLarge(maxBytes)
    if (coding !== 'identity') {
      throw ApiError.invalid(
        [{ path: ['body'], message: `The body is not valid ${coding} data` }],
        `The body could not be decompressed (Content-Encoding ${coding}).`,
      )
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
