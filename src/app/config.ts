import { type Config, type ConfigOverrides, resolveConfig } from '../config.js'
import { DOMAINS } from './domains.js'

/** The appliance's settings and every domain's, resolved: flags > SVC_* > config file > fallbacks. */
export function resolveAppConfig(
  overrides: ConfigOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): Config {
  return resolveConfig(
    overrides,
    env,
    DOMAINS.flatMap((domain) => domain.settings ?? []),
  )
}
