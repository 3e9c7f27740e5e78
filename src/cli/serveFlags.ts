import { Flags } from '@oclif/core'
import { svcExecutable } from '../packageRoot.js'
import { ConfigError, type ConfigOverrides } from '../config.js'
import { parseDuration } from './duration.js'
import type { BackgroundSync } from './runServer.js'

/** Flags that override the network settings of the resolved config (env SVC_HOST, SVC_PORT, …). */
export const serveFlags = {
  host: Flags.string({
    description: 'address to listen on (env SVC_HOST; default 127.0.0.1, loopback only)',
  }),
  port: Flags.string({ description: 'port to listen on (env SVC_PORT; default 8080; 0 picks a free one)' }),
  'base-url': Flags.string({ description: 'public base URL used in absolute links (env SVC_BASE_URL)' }),
  'docs-url': Flags.string({
    description: 'documentation URL used in problem types (env SVC_DOCS_URL; default <base-url>/docs)',
  }),
  'dashboard-url': Flags.string({ description: 'where operators manage keys (env SVC_DASHBOARD_URL)' }),
  'sync-interval': Flags.string({
    description: 'how often to sync enabled publishers in the background (5m, 30s, 1h; 0 turns it off)',
    default: '5m',
  }),
}

/** The background publisher sync asked for by --sync-interval, run through this same `svc` executable. */
export function backgroundSync(flags: { 'sync-interval': string }): BackgroundSync {
  const intervalMs = parseDuration(flags['sync-interval'])
  if (intervalMs === undefined) {
    throw new ConfigError(
      `Invalid setting sync-interval: "${flags['sync-interval']}" is not a duration such as 5m, 30s or 0`,
    )
  }
  return { intervalMs, bin: svcExecutable() }
}

export function serveOverrides(flags: {
  db?: string
  config?: string
  host?: string
  port?: string
  'base-url'?: string
  'docs-url'?: string
  'dashboard-url'?: string
}): ConfigOverrides {
  return {
    db: flags.db,
    config: flags.config,
    host: flags.host,
    port: flags.port,
    baseUrl: flags['base-url'],
    docsUrl: flags['docs-url'],
    dashboardUrl: flags['dashboard-url'],
  }
}
