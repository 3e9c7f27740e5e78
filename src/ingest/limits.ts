import { type Config, defineSetting, type SettingRule, settingOf, type Zod } from '../config.js'

/**
 * What bounds every import and every fetch of a third party's data: the size of one record, the size and
 * time of one remote source, and the hosts that documents from the internet may still send us to on the
 * operator's own network. Settings like the others (SVC_* > config file > default).
 */
export interface IngestLimits {
  /** A record (an NDJSON line, a CSV, tab or RRF row, one whole JSON document) larger is refused. */
  maxRecordBytes: number
  /** Decompressed bytes one remote source may send. */
  maxSourceBytes: number
  /** How long one remote source may take, whole. */
  sourceTimeoutMs: number
  /** Hosts a URL from a remote document may name even when they are on a private network. */
  allowHosts: readonly string[]
}

const MB = 1024 * 1024

/** JSON nested deeper than this is refused: no record of the data the appliance serves needs more. */
export const MAX_JSON_DEPTH = 100

const megabytes = (max: number) => (z: Zod) =>
  z.coerce
    .number({ error: `must be a number of megabytes from 1 to ${max}` })
    .min(1, `must be a number of megabytes from 1 to ${max}`)
    .max(max, `must be a number of megabytes from 1 to ${max}`)

export const IMPORT_MAX_RECORD_MB = defineSetting({
  name: 'importMaxRecordMb',
  env: 'SVC_IMPORT_MAX_RECORD_MB',
  rule: megabytes(1024),
  fallback: 64,
})

export const IMPORT_MAX_SOURCE_MB = defineSetting({
  name: 'importMaxSourceMb',
  env: 'SVC_IMPORT_MAX_SOURCE_MB',
  rule: megabytes(1024 * 1024),
  fallback: 20_480,
})

export const IMPORT_SOURCE_TIMEOUT_S = defineSetting({
  name: 'importSourceTimeoutS',
  env: 'SVC_IMPORT_SOURCE_TIMEOUT_S',
  rule: (z) =>
    z.coerce
      .number({ error: 'must be a number of seconds from 1 to 86400' })
      .int('must be a number of seconds from 1 to 86400')
      .min(1, 'must be a number of seconds from 1 to 86400')
      .max(86_400, 'must be a number of seconds from 1 to 86400'),
  fallback: 1800,
})

export const FETCH_ALLOW_HOSTS = defineSetting<string[]>({
  name: 'fetchAllowHosts',
  env: 'SVC_FETCH_ALLOW_HOSTS',
  rule: (z) =>
    z.preprocess(
      (raw) => (typeof raw === 'string' ? raw.split(',').map((host) => host.trim().toLowerCase()) : raw),
      z.array(z.string().min(1, 'must list host names, comma-separated')),
    ) as unknown as ReturnType<SettingRule<string[]>>,
  fallback: [],
})

export const INGEST_SETTINGS = [
  IMPORT_MAX_RECORD_MB,
  IMPORT_MAX_SOURCE_MB,
  IMPORT_SOURCE_TIMEOUT_S,
  FETCH_ALLOW_HOSTS,
]

export const DEFAULT_INGEST_LIMITS: IngestLimits = {
  maxRecordBytes: 64 * MB,
  maxSourceBytes: 20_480 * MB,
  sourceTimeoutMs: 1_800_000,
  allowHosts: [],
}

/** The limits as configured. */
export function ingestLimits(config: Config): IngestLimits {
  return {
    maxRecordBytes: (settingOf(config, IMPORT_MAX_RECORD_MB) ?? 64) * MB,
    maxSourceBytes: (settingOf(config, IMPORT_MAX_SOURCE_MB) ?? 20_480) * MB,
    sourceTimeoutMs: (settingOf(config, IMPORT_SOURCE_TIMEOUT_S) ?? 1800) * 1000,
    allowHosts: settingOf(config, FETCH_ALLOW_HOSTS) ?? [],
  }
}

/** "64 MB (SVC_IMPORT_MAX_RECORD_MB)": how a message names a limit. */
export const describeMb = (bytes: number, env: string) =>
  `${Math.round((bytes / MB) * 100) / 100} MB (${env})`
