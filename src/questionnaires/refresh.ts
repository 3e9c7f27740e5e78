import { type Config, settingOf } from '../config.js'
import type { Db } from '../db/sqlite.js'
import { ApiError } from '../http/errors.js'
import { upstreamTuning } from '../upstream/client.js'
import { consultSource, heldOrders } from './consult.js'
import { QUESTIONNAIRE_SOURCES, QUESTIONNAIRE_TIMEOUT_MS } from './settings.js'
import { QuestionnaireSources } from './sources.js'

export interface RefreshOutcome {
  url: string
  /** unchanged (304), found (replaced by the source's answer), none (gone there: dropped), or why it failed. */
  outcome: 'unchanged' | 'found' | 'none' | 'not under a configured address' | string
}

/** `svc questionnaires refresh`: revalidates every fetched canonical (or one) against its configured source. */
export async function refreshFetched(db: Db, config: Config, url?: string): Promise<RefreshOutcome[]> {
  const sources = new QuestionnaireSources(settingOf(config, QUESTIONNAIRE_SOURCES) ?? [], {
    ...upstreamTuning(config),
    timeoutMs: settingOf(config, QUESTIONNAIRE_TIMEOUT_MS) ?? 10_000,
  })
  const urls = db
    .prepare(
      `SELECT DISTINCT url FROM questionnaire_held WHERE origin = 'fetched' AND (? IS NULL OR url = ?) ORDER BY url`,
    )
    .pluck()
    .all(url ?? null, url ?? null) as string[]
  const outcomes: RefreshOutcome[] = []
  for (const canonical of urls) {
    const address = sources.addressOf(canonical)
    if (!address) {
      outcomes.push({ url: canonical, outcome: 'not under a configured address' })
      continue
    }
    try {
      const kind = await consultSource(db, sources, address, canonical, heldOrders(db, canonical), {
        signal: new AbortController().signal,
        now: new Date().toISOString(),
      })
      outcomes.push({ url: canonical, outcome: kind })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      outcomes.push({ url: canonical, outcome: `failed: ${error.message}` })
    }
  }
  return outcomes
}
