import { join } from 'node:path'
import type { Db } from '../db/open.js'
import { packageRoot } from '../packageRoot.js'
import { addPublisher, findPublisher } from './publishers.js'
import { type SyncReport, syncPublishers } from './sync.js'

const DEMO_PUBLISHER = 'smart-examples'

/** The bundled SMART Scheduling Links example publisher (data/scheduling), registered once and synced from disk. */
export async function loadDemoScheduling(db: Db): Promise<SyncReport | undefined> {
  if (!findPublisher(db, DEMO_PUBLISHER)) {
    addPublisher(db, {
      slug: DEMO_PUBLISHER,
      displayName: 'SMART Scheduling Links examples',
      manifestUrl: join(packageRoot(), 'data', 'scheduling', DEMO_PUBLISHER, '$bulk-publish'),
    })
  }
  const [report] = await syncPublishers(db, { clock: Date.now, only: DEMO_PUBLISHER })
  return report
}
