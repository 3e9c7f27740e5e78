import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Clock } from '../clock.js'
import type { RequestLog } from '../stats/requestLog.js'
import { ApiError, FHIR_CONTENT_TYPE, operationOutcome, PROBLEM_CONTENT_TYPE, problemBody } from './errors.js'
import { timeOrderedUuid } from './middleware/requestContext.js'
import { pathBase } from './pathBase.js'

/** Node's largest request head (request line and headers); past it the parser answers 431. */
export const MAX_HEADER_BYTES = 16 * 1024

interface ParserError extends Error {
  code?: string
  rawPacket?: Buffer
}

/** What the request line received says, as far as it goes: a malformed request may carry neither. */
function requestLine(raw: Buffer | undefined): { method: string; path: string } {
  const line = raw?.subarray(0, Math.min(raw.length, 4096)).toString('latin1').split('\r\n')[0] ?? ''
  const [method = '', target = ''] = line.split(' ')
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split('?')[0] ?? ''
  return {
    method: /^[A-Za-z]{1,16}$/.test(method) ? method.toUpperCase() : '-',
    path: path.startsWith('/') ? path.slice(0, 256) : '-',
  }
}

function refusalFor(error: ParserError): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, {
        detail: `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB; send a shorter URL or fewer headers.`,
      })
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, { detail: 'The request did not arrive in full in time.' })
    case 'HPE_INVALID_METHOD':
      return new ApiError(400, {
        detail: 'The request method is not one HTTP defines; use GET, HEAD, POST or OPTIONS.',
      })
    default:
      return new ApiError(400, { detail: 'The request is not well-formed HTTP/1.1.' })
  }
}

/**
 * Answers what Node's HTTP parser refuses before Koa sees it (a method it does not know, a head over
 * 16 KiB, a malformed request line) in the spec's shape, by the path's base, with a request id, and logs it
 * like any request. Without this Node writes a bare status line with no id and no body.
 */
export function answerClientErrors(deps: { log: RequestLog; docsUrl: string; clock: Clock }) {
  return (error: ParserError, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const requestId = timeOrderedUuid()
    const refusal = refusalFor(error)
    const { method, path } = requestLine(error.rawPacket)
    const fhir = path !== '-' && pathBase(path) === 'fhir'
    const body = JSON.stringify(
      fhir ? operationOutcome(refusal) : problemBody(refusal, deps.docsUrl, requestId),
    )
    const head = [
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}`,
      `Content-Type: ${fhir ? FHIR_CONTENT_TYPE : PROBLEM_CONTENT_TYPE}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Cache-Control: no-store',
      'Connection: close',
    ]
    const answer = `${head.join('\r\n')}\r\n\r\n${body}`
    socket.end(answer)
    deps.log.refused(
      {
        requestId,
        at: deps.clock(),
        orgId: null,
        keyId: null,
        method,
        path,
        route: null,
        group: null,
        status: refusal.status,
        durationMs: 0,
        bytes: Buffer.byteLength(answer),
      },
      path === '-' ? 'open' : pathBase(path),
    )
  }
}
