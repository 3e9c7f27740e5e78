import { createHash, randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'

/**
 * Key format: `svc_sk_` + 32 base62 characters of randomness (190 bits) + 6 base62 characters of CRC-32
 * over them. The checksum lets a mistyped key be told apart from an unknown one without a database read.
 */
export const KEY_PREFIX = 'svc_sk_'
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const BODY_LENGTH = 32
const CHECK_LENGTH = 6
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECK_LENGTH}}$`)

/** `value` in base62, left-padded to `width` digits; `value` must be below 62^width. */
function base62(value: number, width: number): string {
  let out = ''
  let rest = value
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

function checksum(body: string): string {
  // A CRC-32 is below 2^32 < 62^6: plain numbers hold it, where BigInt arithmetic cost a request ~0.5 µs.
  return base62(crc32(body), CHECK_LENGTH)
}

export function generateSecret(): string {
  // Each digit drawn uniformly (randomInt rejects biased draws): 32 digits hold 190.5 bits.
  const body = Array.from({ length: BODY_LENGTH }, () => ALPHABET[randomInt(62)]).join('')
  return `${KEY_PREFIX}${body}${checksum(body)}`
}

export type KeyShape = 'well-formed' | 'wrong-prefix' | 'malformed' | 'bad-checksum'

export function checkKeyShape(key: string): KeyShape {
  if (!key.startsWith(KEY_PREFIX)) return 'wrong-prefix'
  if (!KEY_PATTERN.test(key)) return 'malformed'
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH)
  return key.endsWith(checksum(body)) ? 'well-formed' : 'bad-checksum'
}

export function hashSecret(key: string): Buffer {
  return createHash('sha256').update(key).digest()
}

/** What `svc keys list` shows so an operator can tell keys apart: never enough to use. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…`
}
