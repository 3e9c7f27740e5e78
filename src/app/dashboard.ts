import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Db } from '../db/open.js'
import type { DashboardDeps } from '../dashboard/operations.js'
import { svcExecutable } from '../packageRoot.js'
import { setPublisherEnabled } from '../scheduling/publishers.js'
import { importPublishersCommand, runSync } from '../scheduling/sync/schedule.js'
import { fetchRefusal } from '../scheduling/sync/syncPublisher.js'
import { DOMAINS } from './domains.js'

/**
 * What the dashboard reads and does, from the same operations the CLI runs: every domain's data sets, and
 * the publishers' switches and sync (`svc publishers enable|disable`, `svc import publishers --publisher`).
 */
export function dashboardDeps(
  store: { db: Db; live: Db },
  config: Config,
  clock: Clock,
  log: (line: string) => void,
): DashboardDeps {
  const { db } = store
  return {
    ...store,
    config,
    clock,
    dataSets: () => DOMAINS.flatMap((domain) => domain.dataSets?.(db) ?? []),
    publishers: {
      setEnabled: (slug, enabled) => void setPublisherEnabled(db, slug, enabled),
      syncNow: (slug) => {
        const reason = fetchRefusal(db, slug, clock())
        if (reason) return { started: false, reason }
        runSync(importPublishersCommand(config, svcExecutable(), slug), log)
        return { started: true }
      },
    },
  }
}
