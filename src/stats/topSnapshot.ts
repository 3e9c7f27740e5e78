import { listOrganizations, type Organization } from '../accounts/orgs.js'
import { listPlans, type Plan } from '../accounts/plans.js'
import type { Db } from '../db/open.js'
import type { Percentiles } from './histogram.js'
import { type PublisherStatus, readPublisherStatus } from './publisherStatus.js'
import { SERVER_SEEN_MS } from './liveMinute.js'
import { type OrgQuota, readQuota } from './quota.js'
import {
  emptyWindowFigures,
  HISTORY_BUCKET_MS,
  NOW_MS,
  RequestWindow,
  type StatusClass,
  WINDOW_MS,
  type WindowFigures,
} from './requestWindow.js'

/** The two files `svc top` reads: organizations, plans and publishers from main; requests and counters from live. */
export interface TopSources {
  main: Db
  live: Db
}

export interface TopSnapshot {
  at: string
  /**
   * `waiting`: the database file does not exist yet (no server or command has created it), or cannot be
   * read (`problem` says why).
   */
  state: 'ready' | 'waiting'
  problem?: string
  windowSeconds: number
  /** The organization filter applied (part of the slug), or null. */
  filter: string | null
  traffic: {
    /** Requests in the window. */
    requests: number
    /** Requests a second over the last `nowSeconds`. */
    perSecond: number
    nowSeconds: number
    byClass: Record<StatusClass, number>
    /** Requests a second per bucket, oldest first, every organization whatever the filter. */
    history: { bucketSeconds: number; perSecond: number[] }
  }
  latency: {
    overall: (Percentiles & { requests: number }) | null
    groups: ({ group: string; requests: number } & Percentiles)[]
  }
  topEndpoints: WindowFigures['endpoints']
  /** `org` null: requests without a key (401s, documentation). */
  topOrgs: { org: string | null; requests: number; errors: number; rejected: number }[]
  quota: OrgQuota[]
  recentErrors: {
    at: string
    status: number
    method: string
    path: string
    requestId: string
    org: string | null
  }[]
  publishers: PublisherStatus[]
  /**
   * The serving processes seen in the last few seconds (each worker of svc serve), with their event-loop
   * delay over their last 10 to 20 s: how long a callback waited before the loop ran it.
   */
  servers: { pid: number; startedAt: string; loopP99Ms: number; loopMaxMs: number }[]
}

/** What `svc top` shows before the database exists, or while it has no tables yet. */
export function emptySnapshot(
  now: number,
  state: TopSnapshot['state'],
  filter: string | null = null,
): TopSnapshot {
  return {
    ...windowPart(now, emptyWindowFigures(now), filter),
    state,
    topOrgs: [],
    quota: [],
    recentErrors: [],
    publishers: [],
    servers: [],
  }
}

function windowPart(now: number, figures: WindowFigures, filter: string | null) {
  return {
    at: new Date(now).toISOString(),
    windowSeconds: WINDOW_MS / 1000,
    filter,
    traffic: {
      requests: figures.requests,
      perSecond: figures.perSecondNow,
      nowSeconds: NOW_MS / 1000,
      byClass: figures.byClass,
      history: { bucketSeconds: HISTORY_BUCKET_MS / 1000, perSecond: figures.history },
    },
    latency: { overall: figures.latency, groups: figures.groups },
    topEndpoints: figures.endpoints,
  }
}

/** What `svc top` shows from the main file; it changes when an operator or a sync does something. */
interface Accounts {
  tables: Set<string>
  orgs: Organization[]
  plans: Plan[]
  slugs: Map<number, string>
  publishers: PublisherStatus[]
}

/**
 * Reads snapshots from open sources, keeping the request window between reads so that each read costs
 * what was logged since the last one, and what it read of the main file until that file changes.
 * Tables not created yet (a store no server has migrated) read as empty.
 */
export class TopReader {
  readonly #window: RequestWindow
  #accounts: { generation: number; value: Accounts } | undefined

  constructor(
    private readonly sources: TopSources,
    windowOptions?: ConstructorParameters<typeof RequestWindow>[1],
  ) {
    this.#window = new RequestWindow(sources.live, windowOptions)
  }

  read(now: number, filter: string | null = null): TopSnapshot {
    const { live } = this.sources
    const accounts = this.#readAccounts()
    const liveTables = new Set(presentTables(live))
    const slugOf = (orgId: number | null) =>
      orgId === null ? null : (accounts.slugs.get(orgId) ?? `#${orgId}`)
    const includeOrg = (orgId: number | null) =>
      filter === null || (orgId !== null && (accounts.slugs.get(orgId) ?? '').includes(filter))

    if (liveTables.has('request_log')) this.#window.refresh(now)
    const figures = this.#window.figures(now, includeOrg)
    const quota =
      accounts.tables.has('organizations') && accounts.tables.has('plans') && liveTables.has('usage_counters')
        ? readQuota(live, accounts, now, (orgId) => figures.orgs.get(orgId)?.rejected ?? 0)
        : []
    return {
      ...windowPart(now, figures, filter),
      state: 'ready',
      topOrgs: [...figures.orgs]
        .map(([orgId, counts]) => ({ org: slugOf(orgId), ...counts }))
        .sort((a, b) => b.requests - a.requests || (a.org ?? '').localeCompare(b.org ?? '')),
      // Nearest the monthly allowance first: those are the organizations an operator watches.
      quota: quota
        .filter((row) => includeOrg(row.orgId))
        .sort(
          (a, b) => b.month.used / b.month.limit - a.month.used / a.month.limit || a.org.localeCompare(b.org),
        )
        .map(({ orgId, ...row }) => row),
      recentErrors: figures.errors.map(({ orgId, ...error }) => ({
        ...error,
        at: new Date(error.at).toISOString(),
        org: slugOf(orgId),
      })),
      publishers: accounts.publishers,
      servers: liveTables.has('server_processes') ? readServers(live, now) : [],
    }
  }

  #readAccounts(): Accounts {
    const { main } = this.sources
    const generation = main.changeGeneration()
    if (this.#accounts?.generation !== generation) {
      const tables = new Set(presentTables(main))
      const orgs = tables.has('organizations') ? listOrganizations(main) : []
      this.#accounts = {
        generation,
        value: {
          tables,
          orgs,
          plans: tables.has('plans') ? listPlans(main) : [],
          slugs: new Map(orgs.map((org) => [org.id, org.slug])),
          publishers: tables.has('publishers') ? readPublisherStatus(main) : [],
        },
      }
    }
    return this.#accounts.value
  }
}

function readServers(live: Db, now: number): TopSnapshot['servers'] {
  return (
    live
      .statement(
        `SELECT pid, started_at AS startedAt, loop_p99_ms AS loopP99Ms, loop_max_ms AS loopMaxMs
         FROM server_processes WHERE seen_at >= ? ORDER BY pid`,
      )
      .all(now - SERVER_SEEN_MS) as { pid: number; startedAt: number; loopP99Ms: number; loopMaxMs: number }[]
  ).map((row) => ({ ...row, startedAt: new Date(row.startedAt).toISOString() }))
}

function presentTables(db: Db): string[] {
  return db.statement("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]
}
