import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { z } from 'zod'
import { UserError } from './userError.js'

/**
 * One resolved configuration: flags > environment (SVC_*) > config file > defaults.
 * Each setting is declared once with its environment name and its rule.
 */
const SETTINGS = {
  db: { env: 'SVC_DB', schema: z.string().min(1) },
  host: { env: 'SVC_HOST', schema: z.string().min(1) },
  port: {
    env: 'SVC_PORT',
    schema: z.coerce
      .number({ error: 'must be a port number from 0 to 65535' })
      .int()
      .min(0)
      .max(65535, 'must be a port number from 0 to 65535'),
  },
  baseUrl: { env: 'SVC_BASE_URL', schema: z.url({ protocol: /^https?$/ }) },
  docsUrl: { env: 'SVC_DOCS_URL', schema: z.url({ protocol: /^https?$/ }) },
  dashboardUrl: { env: 'SVC_DASHBOARD_URL', schema: z.url({ protocol: /^https?$/ }) },
  directoryUrl: { env: 'SVC_DIRECTORY_URL', schema: z.url({ protocol: /^https?$/ }) },
  directoryApiKey: { env: 'SVC_DIRECTORY_API_KEY', schema: z.string().min(1) },
  directoryTimeoutMs: {
    env: 'SVC_DIRECTORY_TIMEOUT_MS',
    schema: z.coerce
      .number({ error: 'must be a number of milliseconds from 100 to 60000' })
      .int('must be a number of milliseconds from 100 to 60000')
      .min(100, 'must be a number of milliseconds from 100 to 60000')
      .max(60_000, 'must be a number of milliseconds from 100 to 60000'),
  },
  answerCacheMb: {
    env: 'SVC_ANSWER_CACHE_MB',
    schema: z.coerce
      .number({ error: 'must be a number of megabytes from 0 (off) to 4096' })
      .min(0, 'must be a number of megabytes from 0 (off) to 4096')
      .max(4096, 'must be a number of megabytes from 0 (off) to 4096'),
  },
  terminologySources: {
    env: 'SVC_TERMINOLOGY_SOURCES',
    // A JSON object in the environment, an object in the config file: code system URI -> FHIR server base.
    schema: z.preprocess(
      (raw) => {
        if (typeof raw !== 'string') return raw
        try {
          return JSON.parse(raw) as unknown
        } catch {
          return raw
        }
      },
      z.record(
        z.string().min(1),
        z.url({ protocol: /^https?$/, error: 'each source must be an http(s) URL of a FHIR server base' }),
        { error: 'must be a JSON object mapping code system URIs to FHIR server base URLs' },
      ),
    ),
  },
} as const

export type SettingName = keyof typeof SETTINGS

export interface Config {
  db: string
  host: string
  port: number
  /** Public base URL used in absolute links, without a trailing slash. */
  baseUrl: string
  docsUrl: string
  dashboardUrl: string
  /** Remote FHIR base the provider directory forwards to; unset: the imported release answers. */
  directoryUrl?: string
  /** Sent to the remote directory as `Authorization: Bearer`; never logged. */
  directoryApiKey?: string
  /** Per attempt against the remote directory. */
  directoryTimeoutMs: number
  /** Code system URI -> base URL of the remote FHIR terminology server that answers for it. */
  terminologySources: Record<string, string>
  /** Room for answers kept for identical requests, per server process (src/http/answerCache.ts); 0: none. */
  answerCacheMb: number
  configFile: string | null
  /** True when the URLs were derived from host and port rather than set, so a bound port can replace them. */
  urlsDerived: boolean
}

export const DEFAULT_CONFIG_FILE = 'svc.config.json'

export class ConfigError extends UserError {
  override name = 'ConfigError'
}

export type ConfigOverrides = Partial<Record<SettingName, string | number | undefined>> & { config?: string }

function readConfigFile(path: string | undefined, required: boolean): Record<string, unknown> {
  if (!path) return {}
  if (!existsSync(path)) {
    if (required) throw new ConfigError(`Invalid setting config: file ${path} does not exist`)
    return {}
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new ConfigError(`Invalid setting config: ${path} is not valid JSON (${(error as Error).message})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Invalid setting config: ${path} must hold a JSON object`)
  }
  const unknown = Object.keys(parsed).filter((key) => !(key in SETTINGS))
  if (unknown.length > 0) {
    throw new ConfigError(
      `Invalid setting config: ${path} has unknown setting(s) ${unknown.join(', ')}; known: ${Object.keys(SETTINGS).join(', ')}`,
    )
  }
  return parsed as Record<string, unknown>
}

const trimSlash = (url: string) => url.replace(/\/+$/, '')

export function resolveConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const explicitFile = overrides.config ?? env.SVC_CONFIG
  const filePath = explicitFile ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined)
  const file = readConfigFile(filePath, explicitFile !== undefined)

  const pick = <K extends SettingName>(name: K, fallback: string | number | undefined) => {
    const setting = SETTINGS[name]
    const [raw, origin] =
      overrides[name] !== undefined
        ? [overrides[name], `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`]
        : env[setting.env] !== undefined && env[setting.env] !== ''
          ? [env[setting.env], setting.env]
          : file[name] !== undefined
            ? [file[name], `${filePath}: ${name}`]
            : [fallback, name]
    if (raw === undefined) return undefined
    const result = setting.schema.safeParse(raw)
    if (!result.success) {
      const reason = result.error.issues[0]?.message ?? 'invalid value'
      throw new ConfigError(`Invalid setting ${origin}: ${JSON.stringify(raw)} (${reason})`)
    }
    return result.data as z.infer<(typeof SETTINGS)[K]['schema']>
  }

  const host = pick('host', '127.0.0.1') as string
  const port = pick('port', 8080) as number
  const explicitBase = pick('baseUrl', undefined) as string | undefined
  const explicitDocs = pick('docsUrl', undefined) as string | undefined
  const explicitDashboard = pick('dashboardUrl', undefined) as string | undefined
  const config: Config = {
    db: resolve(pick('db', './data/svc.db') as string),
    host,
    port,
    baseUrl: '',
    docsUrl: '',
    dashboardUrl: '',
    directoryUrl: pick('directoryUrl', undefined) as string | undefined,
    directoryApiKey: pick('directoryApiKey', undefined) as string | undefined,
    directoryTimeoutMs: pick('directoryTimeoutMs', 10_000) as number,
    answerCacheMb: pick('answerCacheMb', 64) as number,
    terminologySources: (pick('terminologySources', undefined) as Record<string, string> | undefined) ?? {},
    configFile: filePath ? resolve(filePath) : null,
    urlsDerived: explicitBase === undefined,
  }
  return withUrls(config, explicitBase, explicitDocs, explicitDashboard)
}

function withUrls(config: Config, base?: string, docs?: string, dashboard?: string): Config {
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host
  const baseUrl = trimSlash(base ?? `http://${hostForUrl}:${config.port}`)
  return {
    ...config,
    baseUrl,
    docsUrl: trimSlash(docs ?? `${baseUrl}/docs`),
    dashboardUrl: trimSlash(dashboard ?? baseUrl),
  }
}

/** After listening on port 0, links derived from host and port must name the port actually bound. */
export function withBoundPort(config: Config, port: number): Config {
  if (!config.urlsDerived || port === config.port) return { ...config, port }
  const derivedDocs = config.docsUrl === `${config.baseUrl}/docs`
  const derivedDashboard = config.dashboardUrl === config.baseUrl
  return withUrls(
    { ...config, port },
    undefined,
    derivedDocs ? undefined : config.docsUrl,
    derivedDashboard ? undefined : config.dashboardUrl,
  )
}
