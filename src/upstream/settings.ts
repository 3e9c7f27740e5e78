import { ConfigError, defineSetting } from '../config.js'

/** An upstream answer larger than this is cut off as it passes it (502), never held whole. */
export const UPSTREAM_MAX_ANSWER_MB = defineSetting({
  name: 'upstreamMaxAnswerMb',
  env: 'SVC_UPSTREAM_MAX_ANSWER_MB',
  rule: (z) =>
    z.coerce
      .number({ error: 'must be a number of megabytes from 1 to 1024' })
      .min(1, 'must be a number of megabytes from 1 to 1024')
      .max(1024, 'must be a number of megabytes from 1 to 1024'),
  fallback: 32,
})

/** A call that reaches an upstream source answers 504 past this many seconds, whatever it waits on. */
export const UPSTREAM_DEADLINE_S = defineSetting({
  name: 'upstreamDeadlineS',
  env: 'SVC_UPSTREAM_DEADLINE_S',
  rule: (z) =>
    z.coerce
      .number({ error: 'must be a number of seconds from 1 to 600' })
      .int('must be a number of seconds from 1 to 600')
      .min(1, 'must be a number of seconds from 1 to 600')
      .max(600, 'must be a number of seconds from 1 to 600'),
  fallback: 30,
})

export const UPSTREAM_SETTINGS = [UPSTREAM_MAX_ANSWER_MB, UPSTREAM_DEADLINE_S]

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/**
 * Credentials for an upstream (a key, or `user:pass@` in its URL) travel only over https, or over http to a
 * loopback address: anything else refuses to start, naming the setting.
 */
export function checkCredentialsTransport(url: string, setting: string, credentials: boolean): void {
  const parsed = new URL(url)
  const carries = credentials || parsed.username !== '' || parsed.password !== ''
  if (!carries || parsed.protocol === 'https:' || LOOPBACK.test(parsed.hostname)) return
  throw new ConfigError(
    `Invalid setting ${setting}: credentials for ${parsed.protocol}//${parsed.hostname} would travel in clear; use https (or http to a loopback address)`,
  )
}
