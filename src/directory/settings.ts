import { type Config, defineSetting, httpUrl, milliseconds, settingOf } from '../config.js'
import { checkCredentialsTransport } from '../upstream/settings.js'

/** A remote FHIR directory base; unset: the imported release answers. */
export const DIRECTORY_URL = defineSetting({
  name: 'directoryUrl',
  env: 'SVC_DIRECTORY_URL',
  rule: httpUrl,
})

/** Sent to the remote directory as `Authorization: Bearer`; never logged. */
export const DIRECTORY_API_KEY = defineSetting({
  name: 'directoryApiKey',
  env: 'SVC_DIRECTORY_API_KEY',
})

/** Per attempt against the remote directory. */
export const DIRECTORY_TIMEOUT_MS = defineSetting({
  name: 'directoryTimeoutMs',
  env: 'SVC_DIRECTORY_TIMEOUT_MS',
  rule: milliseconds(100, 60_000),
  fallback: 10_000,
})

export const DIRECTORY_SETTINGS = [DIRECTORY_URL, DIRECTORY_API_KEY, DIRECTORY_TIMEOUT_MS]

/** The directory's key (or credentials in its URL) travel over https, or http to loopback only. */
export function checkDirectoryConfig(config: Config): void {
  const url = settingOf(config, DIRECTORY_URL)
  if (url)
    checkCredentialsTransport(url, DIRECTORY_URL.env, settingOf(config, DIRECTORY_API_KEY) !== undefined)
}
