import { defineSetting } from '../config.js'

/** Open connections one server takes; past it new ones are refused (closed at once) until some end. */
export const MAX_CONNECTIONS = defineSetting({
  name: 'maxConnections',
  env: 'SVC_MAX_CONNECTIONS',
  rule: (z) =>
    z.coerce
      .number({ error: 'must be a number of connections from 1 to 1000000' })
      .int('must be a number of connections from 1 to 1000000')
      .min(1, 'must be a number of connections from 1 to 1000000')
      .max(1_000_000, 'must be a number of connections from 1 to 1000000'),
  fallback: 2000,
})
