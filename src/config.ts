import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { z } from 'zod'
import { UserError } from './userError.js'

/** zod, handed to a setting's rule when a value is given: a command that sets nothing never loads it. */
export type Zod = typeof z

/**
 * One resolved configuration: flags > environment (SVC_*) > config file > defaults. Each setting is declared
 * once with its name (the config file's key), its environment name and its rule: the appliance's own here,
 * each domain's in its folder (`DomainModule.settings`), gathered by the composition root.
 */
export type Setting<T = unknown> = {
  /** The key in the config file, and what a flag of the same meaning is named after (`--base-url`). */
  name: string
  env: string
  /** The value when nothing sets it; none: unset. */
  fallback?: T
} & (string extends T ? { rule?: SettingRule<T> } : { rule: SettingRule<T> })

/**
 * The rule a given value must meet, made only when one is given: zod takes ~70 ms to load, a third of a
 * command's start. A text setting may have none: any non-empty text.
 */
export type SettingRule<T> = (z: Zod) => z.ZodType<T>

export function defineSetting<T>(setting: Setting<T>): Setting<T> {
  return setting
}

/** A whole number of milliseconds within bounds, from a flag, the environment or the file. */
export const milliseconds = (min: number, max: number) => (z: Zod) => {
  const message = `must be a number of milliseconds from ${min} to ${max}`
  return z.coerce.number({ error: message }).int(message).min(min, message).max(max, message)
}

/** An http(s) URL. */
export const httpUrl = (z: Zod) => z.url({ protocol: /^https?$/ })

/** A JSON object in the environment, an object in the config file. */
export const jsonObject =
  <T>(rule: (z: Zod) => z.ZodType<T>) =>
  (z: Zod) =>
    z.preprocess((raw) => {
      if (typeof raw !== 'string') return raw
      try {
        return JSON.parse(raw) as unknown
      } catch {
        return raw
      }
    }, rule(z)) as unknown as z.ZodType<T>

const CORE = {
  db: defineSetting({ name: 'db', env: 'SVC_DB', fallback: './data/svc.db' }),
  host: defineSetting({ name: 'host', env: 'SVC_HOST', fallback: '127.0.0.1' }),
  port: defineSetting({
    name: 'port',
    env: 'SVC_PORT',
    rule: (z) =>
      z.coerce
        .number({ error: 'must be a port number from 0 to 65535' })
        .int()
        .min(0)
        .max(65535, 'must be a port number from 0 to 65535'),
    fallback: 8080,
  }),
  baseUrl: defineSetting({ name: 'baseUrl', env: 'SVC_BASE_URL', rule: httpUrl }),
  docsUrl: defineSetting({ name: 'docsUrl', env: 'SVC_DOCS_URL', rule: httpUrl }),
  dashboardUrl: defineSetting({ name: 'dashboardUrl', env: 'SVC_DASHBOARD_URL', rule: httpUrl }),
  answerCacheMb: defineSetting({
    name: 'answerCacheMb',
    env: 'SVC_ANSWER_CACHE_MB',
    rule: (z) =>
      z.coerce
        .number({ error: 'must be a number of megabytes from 0 (off) to 4096' })
        .min(0, 'must be a number of megabytes from 0 (off) to 4096')
        .max(4096, 'must be a number of megabytes from 0 (off) to 4096'),
    fallback: 64,
  }),
}

export interface Config {
  db: string
  host: string
  port: number
  /** Public base URL used in absolute links, without a trailing slash. */
  baseUrl: string
  docsUrl: string
  dashboardUrl: string
  /** Room for answers kept for identical requests, per server process (src/http/answerCache.ts); 0: none. */
  answerCacheMb: number
  /** The domains' own settings, by name, as resolved: read them with `settingOf`. */
  settings: ReadonlyMap<string, unknown>
  configFile: string | null
  /** True when the URLs were derived from host and port rather than set, so a bound port can replace them. */
  urlsDerived: boolean
}

/** A domain's setting as resolved (its fallback when nothing set it). */
export function settingOf<T>(config: Config, setting: Setting<T>): T | undefined {
  return config.settings.get(setting.name) as T | undefined
}

export const DEFAULT_CONFIG_FILE = 'svc.config.json'

export class ConfigError extends UserError {
  override name = 'ConfigError'
}

/** Flags by setting name (and `config`, the file); unset flags are undefined. */
export type ConfigOverrides = Partial<Record<string, string | number | undefined>> & { config?: string }

function readConfigFile(
  path: string | undefined,
  required: boolean,
  known: readonly string[],
): Record<string, unknown> {
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
  const unknown = Object.keys(parsed).filter((key) => !known.includes(key))
  if (unknown.length > 0) {
    throw new ConfigError(
      `Invalid setting config: ${path} has unknown setting(s) ${unknown.join(', ')}; known: ${known.join(', ')}`,
    )
  }
  return parsed as Record<string, unknown>
}

const trimSlash = (url: string) => url.replace(/\/+$/, '')

/**
 * Resolves the appliance's settings and those `domainSettings` declare; a bad value is one ConfigError line.
 * zod is loaded only when a value given needs a rule.
 */
export async function resolveConfig(
  overrides: ConfigOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
  domainSettings: readonly Setting[] = [],
): Promise<Config> {
  const known = [...Object.values(CORE), ...domainSettings].map((setting) => setting.name)
  const explicitFile = overrides.config ?? env.SVC_CONFIG
  const filePath = explicitFile ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined)
  const file = readConfigFile(filePath, explicitFile !== undefined, known)

  const given = (setting: Setting): [raw: unknown, origin: string] => {
    const { name } = setting
    if (overrides[name] !== undefined)
      return [overrides[name], `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`]
    if (env[setting.env] !== undefined && env[setting.env] !== '') return [env[setting.env], setting.env]
    if (file[name] !== undefined) return [file[name], `${filePath}: ${name}`]
    return [undefined, name]
  }
  const ruled = [...Object.values(CORE), ...domainSettings].some(
    (setting) => setting.rule && given(setting)[0] !== undefined,
  )
  const zod = ruled ? (await import('zod')).z : undefined

  const pick = <T>(setting: Setting<T>): T | undefined => {
    const [raw, origin] = given(setting)
    if (raw === undefined) return setting.fallback
    const invalid = (reason: string) =>
      new ConfigError(`Invalid setting ${origin}: ${JSON.stringify(raw)} (${reason})`)
    if (!setting.rule) {
      if (typeof raw !== 'string' || raw === '') throw invalid('must be a non-empty text')
      return raw as T
    }
    const result = setting.rule(zod as Zod).safeParse(raw)
    if (!result.success) throw invalid(result.error.issues[0]?.message ?? 'invalid value')
    return result.data
  }

  const explicitBase = pick(CORE.baseUrl)
  const config: Config = {
    db: resolve(pick(CORE.db) as string),
    host: pick(CORE.host) as string,
    port: pick(CORE.port) as number,
    baseUrl: '',
    docsUrl: '',
    dashboardUrl: '',
    answerCacheMb: pick(CORE.answerCacheMb) as number,
    settings: new Map(domainSettings.map((setting) => [setting.name, pick(setting)])),
    configFile: filePath ? resolve(filePath) : null,
    urlsDerived: explicitBase === undefined,
  }
  return withUrls(config, explicitBase, pick(CORE.docsUrl), pick(CORE.dashboardUrl))
}

/** A host as a URL or an address with a port names it: an IPv6 address in brackets. */
export const hostInUrl = (host: string) => (host.includes(':') ? `[${host}]` : host)

function withUrls(config: Config, base?: string, docs?: string, dashboard?: string): Config {
  const baseUrl = trimSlash(base ?? `http://${hostInUrl(config.host)}:${config.port}`)
  return {
    ...config,
    baseUrl,
    docsUrl: trimSlash(docs ?? `${baseUrl}/docs`),
    dashboardUrl: trimSlash(dashboard ?? `${baseUrl}/dashboard`),
  }
}

/** After listening on port 0, links derived from host and port must name the port actually bound. */
export function withBoundPort(config: Config, port: number): Config {
  if (!config.urlsDerived || port === config.port) return { ...config, port }
  const derivedDocs = config.docsUrl === `${config.baseUrl}/docs`
  const derivedDashboard = config.dashboardUrl === `${config.baseUrl}/dashboard`
  return withUrls(
    { ...config, port },
    undefined,
    derivedDocs ? undefined : config.docsUrl,
    derivedDashboard ? undefined : config.dashboardUrl,
  )
}
