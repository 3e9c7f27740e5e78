import { cachedStatement, type Db } from '../db/open.js'
import type { Percentiles } from './histogram.js'
import { type PublisherStatus, readPublisherStatus } from './publisherStatus.js'
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
  /** `waiting`: the database file does not exist yet (no server or command has created it). */
  state: 'ready' | 'waiting'
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

/**
 * Reads snapshots from open sources, keeping the request window between reads so that each read costs
 * what was logged since the last one. Tables not created yet (a store no server has migrated) read as empty.
 */
export class TopReader {
  readonly #window: RequestWindow

  constructor(private readonly sources: TopSources) {
    this.#window = new RequestWindow(sources.live)
  }

  read(now: number, filter: string | null = null): TopSnapshot {
    const { main, live } = this.sources
    const tables = new Set([...presentTables(main, 'main'), ...presentTables(live, 'live')])
    const slugs = tables.has('main.organizations') ? orgSlugs(main) : new Map<number, string>()
    const slugOf = (orgId: number | null) => (orgId === null ? null : (slugs.get(orgId) ?? `#${orgId}`))
    const includeOrg = (orgId: number | null) =>
      filter === null || (orgId !== null && (slugs.get(orgId) ?? '').includes(filter))

    if (tables.has('live.request_log')) this.#window.refresh(now)
    const figures = this.#window.figures(now, includeOrg)
    const quota =
      tables.has('main.organizations') && tables.has('main.plans') && tables.has('live.usage_counters')
        ? readQuota(this.sources, now, (orgId) => figures.orgs.get(orgId)?.rejected ?? 0)
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
      publishers: tables.has('main.publishers') ? readPublisherStatus(main) : [],
    }
  }
}

function presentTables(db: Db, prefix: string): string[] {
  const names = cachedStatement(db, "SELECT name FROM sqlite_master WHERE type = 'table'")
    .pluck()
    .all() as string[]
  return names.map((name) => `${prefix}.${name}`)
}

function orgSlugs(main: Db): Map<number, string> {
  const rows = cachedStatement(main, 'SELECT id, slug FROM organizations').all() as {
    id: number
    slug: string
  }[]
  return new Map(rows.map((row) => [row.id, row.slug]))
}
