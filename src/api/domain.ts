import type { Clock } from '../clock.js'
import type { Config, Setting } from '../config.js'
import type { Migration } from '../db/migrate.js'
import type { Db } from '../db/sqlite.js'
import type { UpstreamTuning } from '../upstream/client.js'
import type { Endpoint } from './endpoint.js'
import type { Ports } from './ports.js'

/**
 * What a domain is to the rest of the appliance. Each domain folder's `index.ts` exports one, and the
 * composition root (src/app/domains.ts) walks one list of them to build the schema, the router, the
 * warm-ups, the demo and the CapabilityStatement: adding a domain is a folder and a line in that list.
 *
 * What it serves is loaded only by a process that serves (`serving`), so that a command which manages one
 * domain's data does not load every domain's request handlers. Errors a user can fix (a bad file, an
 * unknown organization) extend `UserError` (src/userError.ts): every command prints them as one line.
 */
export interface DomainModule {
  /** Names its schema steps (`<name>/<step>`); never changed once shipped. */
  readonly name: string
  /** Schema steps of the main file, in order. Append; never edit or rename a shipped one. */
  readonly steps?: readonly Migration[]
  /** Schema steps of the live file (src/db/live.ts), in order. */
  readonly liveSteps?: readonly Migration[]
  /** Its settings (flag > SVC_* > config file > fallback), read with `settingOf` (src/config.ts). */
  readonly settings?: readonly Setting[]
  /** Rules across its settings, checked when the configuration is resolved: throws ConfigError naming one. */
  readonly checkConfig?: (config: Config) => void
  /** What the domain serves, loaded on demand. */
  readonly serving?: () => Promise<DomainServing>
  /** The data sets it holds now (releases, code systems), as the dashboard's Data page lists them: plain SQL. */
  readonly dataSets?: (db: Db) => DataSet[]
  /** Loads the domain's share of the bundled demo data into a store; returns what to tell the user. */
  readonly demo?: (context: DemoContext) => Promise<string[]>
}

/** One imported data set: what it is, where it came from, when, and how much it holds. */
export interface DataSet {
  /** The domain's word for it: `directory`, `code system`, `plans`, `questionnaires`. */
  kind: string
  /** Which one: a release number, a code system and version, a program and plan year. */
  name: string
  /** The files or addresses it was imported from. */
  source: string
  importedAt: string | null
  /** What it holds, in words ("12,400 resources: 9,000 Practitioner, …"). */
  holds: string
}

/** What every domain's per-app state is made from: one per server (per app), never module-level. */
export interface AppContext {
  db: Db
  config: Config
  clock: Clock
  /** Settings every upstream source client is built with; tests shorten waits so retries cost no wall time. */
  upstream: UpstreamTuning
  /** What the app's domains provide to each other (src/api/ports.ts). */
  ports: Ports
}

/**
 * The serving side of a domain. `createState` runs once per app; the endpoints close over what it made
 * (caches, the source chosen by the configuration), so nothing is kept in module-level maps.
 */
export interface DomainServing<State = unknown> {
  createState(app: AppContext): State
  endpoints(state: State): Endpoint[]
  /** Work done before the server listens, so that no answer waits on it. */
  warmUp?(state: State): void
  /**
   * Other forms of `GET /v1/fhir/r4/metadata`, by `mode` value (e.g. `terminology`): a resource built from
   * the store for each request.
   */
  metadataModes?(state: State): Record<string, () => Record<string, unknown>>
}

/** Typed where a domain writes it; held erased, since the list holds domains of every state type. */
export function defineServing<State>(serving: DomainServing<State>): DomainServing {
  return serving as unknown as DomainServing
}

export interface DemoContext {
  db: Db
  /** Folder beside the main file where a demo step may write files it serves from. */
  dataDir: string
  now: number
}
