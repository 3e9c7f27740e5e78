import type { DataSet } from '../api/domain.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Db } from '../db/open.js'

/** What the dashboard does to publishers: the operations `svc publishers` and `svc import publishers` run. */
export interface PublisherActions {
  setEnabled(slug: string, enabled: boolean): void
  /** Starts one publisher's sync (a child `svc import publishers`), or says why the rule refuses it now. */
  syncNow(slug: string): { started: true } | { started: false; reason: string }
}

/** Everything the dashboard reads and does; the composition root (src/app/dashboard.ts) makes it. */
export interface DashboardDeps {
  db: Db
  live: Db
  config: Config
  clock: Clock
  /** Every domain's data sets (DomainModule.dataSets). */
  dataSets(): DataSet[]
  publishers: PublisherActions
}
