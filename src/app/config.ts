import { IMPORT_PRIORITY } from '../cli/priority.js'
import { type Config, type ConfigOverrides, resolveConfig } from '../config.js'
import { MAX_CONNECTIONS } from '../http/settings.js'
import { INGEST_SETTINGS } from '../ingest/limits.js'
import { UPSTREAM_SETTINGS } from '../upstream/settings.js'
import { DOMAINS } from './domains.js'

/** The appliance's settings and every domain's, resolved: flags > SVC_* > config file > fallbacks. */
export async function resolveAppConfig(
  overrides: ConfigOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<Config> {
  const config = await resolveConfig(overrides, env, [
    ...INGEST_SETTINGS,
    IMPORT_PRIORITY,
    ...UPSTREAM_SETTINGS,
    MAX_CONNECTIONS,
    ...DOMAINS.flatMap((domain) => domain.settings ?? []),
  ])
  for (const domain of DOMAINS) domain.checkConfig?.(config)
  return config
}
