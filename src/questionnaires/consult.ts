import type Database from 'better-sqlite3'
import { HeldQuestionnaires } from './held.js'
import type { HeldOrder } from './order.js'
import type { QuestionnaireAddress, QuestionnaireSources, SourceAnswer } from './sources.js'

/**
 * Asks a configured address about a canonical and keeps what it says: with no copy held, a fetch; with
 * fetched copies, a conditional revalidation (304: confirmed; a new answer replaces them; gone there: they
 * are dropped). Copies imported or curated are the operator's: never asked about, never replaced.
 */
export async function consultSource(
  db: Database.Database,
  sources: QuestionnaireSources,
  address: QuestionnaireAddress,
  canonical: string,
  held: readonly HeldOrder[],
  options: { signal: AbortSignal; now: string },
): Promise<SourceAnswer['kind'] | 'held'> {
  const fetched = held.filter((order) => order.origin === 'fetched')
  if (held.length > 0 && fetched.length === 0) return 'held'
  const validators = fetched[0]
  const answer = await sources.fetch(
    address,
    canonical,
    validators
      ? { etag: validators.etag ?? undefined, lastModified: validators.lastModified ?? undefined }
      : undefined,
    options.signal,
  )
  const store = new HeldQuestionnaires(db)
  db.transaction(() => {
    if (answer.kind === 'unchanged') {
      for (const order of fetched) store.confirmed(order.rid, options.now)
      return
    }
    for (const order of fetched) store.remove(order.rid)
    if (answer.kind === 'none') return
    for (const questionnaire of answer.questionnaires)
      store.put({ ...questionnaire, origin: 'fetched', source: address.address }, options.now)
  })()
  return answer.kind
}

/** What questionnaire_held knows of every held copy of a canonical. */
export function heldOrders(db: Database.Database, canonical: string): HeldOrder[] {
  return db
    .prepare(
      'SELECT rid, url, version, status_rank AS statusRank, date, origin, etag, last_modified AS lastModified FROM questionnaire_held WHERE url = ?',
    )
    .all(canonical) as HeldOrder[]
}
