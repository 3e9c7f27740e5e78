import { randomBytes, scrypt, type ScryptOptions, scryptSync, timingSafeEqual } from 'node:crypto'

/** At least this many characters; no other rule (NIST SP 800-63B: length, not composition). */
export const MIN_PASSWORD_LENGTH = 12

/** scrypt cost: N = 2^15, r = 8, p = 1 (OWASP's recommendation), about 50 ms and 32 MiB a hash. */
const COST = { N: 1 << 15, r: 8, p: 1 }
const KEY_BYTES = 32
const scryptOptions = (cost: typeof COST): ScryptOptions => ({ ...cost, maxmem: 128 * cost.N * cost.r * 2 })

/** The rule a new password must meet, as a sentence; undefined when it does. */
export function passwordFault(password: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return `A password needs at least ${MIN_PASSWORD_LENGTH} characters`
  return undefined
}

/** `scrypt$N$r$p$<salt>$<hash>`, base64url: the parameters travel with the hash so that they can be raised. */
export function hashPassword(password: string): string {
  const salt = randomBytes(16)
  const hash = scryptSync(password.normalize('NFC'), salt, KEY_BYTES, scryptOptions(COST))
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

function parse(stored: string) {
  const [kind, n, r, p, salt, hash] = stored.split('$')
  if (kind !== 'scrypt' || !salt || !hash) return undefined
  return {
    cost: { N: Number(n), r: Number(r), p: Number(p) },
    salt: Buffer.from(salt, 'base64url'),
    hash: Buffer.from(hash, 'base64url'),
  }
}

/** A hash no password matches, checked when the account is unknown so that both cases take as long. */
const NOBODY = hashPassword(randomBytes(24).toString('base64url'))

/**
 * Checks a password on libuv's thread pool (scrypt takes about 50 ms: never on the event loop of a server).
 * `stored` undefined: the account is unknown; the same work is done and the answer is false.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parsed = parse(stored ?? NOBODY) ?? (parse(NOBODY) as NonNullable<ReturnType<typeof parse>>)
  const derived = await new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize('NFC'),
      parsed.salt,
      parsed.hash.length,
      scryptOptions(parsed.cost),
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  )
  return stored !== undefined && timingSafeEqual(derived, parsed.hash)
}
