import { type Config, type ConfigOverrides, resolveConfig } from '../config.js'
import { INGEST_SETTINGS } from '../ingest/limits.js'
import { UPSTREAM_MAX_ANSWER_MB } from '../upstream/settings.js'
import { DOMAINS } from './domains.js'

/** The appliance's settings and every domain's, resolved: flags > SVC_* > config file > fallbacks. */
export function resolveAppConfig(
  overrides: ConfigOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): Config {
  return resolveConfig(overrides, env, [
    ...INGEST_SETTINGS,
    UPSTREAM_MAX_ANSWER_MB,
    ...DOMAINS.flatMap((domain) => domain.settings ?? []),
  ])
}
