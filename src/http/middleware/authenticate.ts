import type { Middleware } from 'koa'
import { checkKeyShape, KEY_PREFIX } from '../../accounts/keyFormat.js'
import type { KeyOwner } from '../../accounts/keys.js'
import { ApiError } from '../errors.js'
import { pathBase } from '../pathBase.js'
import type { RequestState } from '../state.js'

/** Every spelling of a path under /v1 needs a key (src/http/pathBase.ts). */
export const requiresKey = (path: string) => pathBase(path) !== 'open'

type Credential = { sent: false } | { sent: true; key: string } | { sent: true; problem: string }

function readCredential(authorization: string, apiKeyHeader: string): Credential {
  if (authorization !== '') {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)
    if (!match?.[1]) return { sent: true, problem: 'the Authorization header must be "Bearer <API key>"' }
    return { sent: true, key: match[1] }
  }
  if (apiKeyHeader !== '') return { sent: true, key: apiKeyHeader.trim() }
  return { sent: false }
}

const SHAPE_PROBLEMS = {
  'wrong-prefix': `it does not start with ${KEY_PREFIX}`,
  malformed: 'it does not have the length or characters of a key; check it was copied whole',
  'bad-checksum': 'its checksum does not match, so it was probably mistyped or truncated',
} as const

/**
 * Every path under /v1 needs a key. The lookup refuses a key whose shape or checksum is wrong without a
 * store read, and looks a well-formed one up by its SHA-256 hash, so revocation is seen at once by every
 * process; only a refused key's shape is checked here, to say why.
 */
export function authenticate(deps: {
  realm: string
  lookup: (key: string) => KeyOwner | undefined
}): Middleware<RequestState> {
  const challenge = `Bearer realm="${deps.realm}"`
  const unauthorized = (detail: string, sent: boolean) =>
    new ApiError(401, {
      detail,
      headers: { 'WWW-Authenticate': sent ? `${challenge}, error="invalid_token"` : challenge },
    })

  return (ctx, next) => {
    if (ctx.state.base === 'open') return next()
    const credential = readCredential(ctx.request.get('Authorization'), ctx.request.get('x-api-key'))
    if (!credential.sent) {
      throw unauthorized(
        'No API key was sent. Send it as "Authorization: Bearer <API key>" or in the x-api-key header.',
        false,
      )
    }
    if ('problem' in credential)
      throw unauthorized(`The API key is not recognised: ${credential.problem}.`, true)
    const owner = deps.lookup(credential.key)
    if (!owner) {
      const shape = checkKeyShape(credential.key)
      const problem = shape === 'well-formed' ? 'it is unknown or has been revoked' : SHAPE_PROBLEMS[shape]
      throw unauthorized(`The API key is not recognised: ${problem}.`, true)
    }
    ctx.state.owner = owner
    return next()
  }
}
