/** Milliseconds since the epoch. Injected everywhere time matters so tests can cross minute and month boundaries. */
export type Clock = () => number

export const systemClock: Clock = () => Date.now()

/**
 * `SVC_FAKE_NOW` (an ISO instant) freezes the clock of a whole process: used by tests that start real
 * `svc serve` processes and must not race a minute boundary.
 */
export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const fixed = env.SVC_FAKE_NOW
  if (!fixed) return systemClock
  const ms = Date.parse(fixed)
  if (Number.isNaN(ms)) throw new Error(`Invalid setting SVC_FAKE_NOW: "${fixed}" is not an ISO 8601 instant`)
  return () => ms
}
