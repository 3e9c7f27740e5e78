import { dirname } from 'node:path'
import type { Db } from '../db/open.js'
import { DOMAINS } from './domains.js'

/** Every domain's share of the bundled demo data set, loaded into the store in turn; what each has to say. */
export async function loadDemoData(db: Db, now: number): Promise<string[]> {
  const lines: string[] = []
  for (const domain of DOMAINS) {
    if (domain.demo) lines.push(...(await domain.demo({ db, dataDir: dirname(db.name), now })))
  }
  return lines
}
