import type { AppContext } from '../api/domain.js'
import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import type { ParamShape } from '../api/params.js'
import { settingOf } from '../config.js'
import type { Db } from '../db/sqlite.js'
import { searchsetBundle } from '../fhir/bundle.js'
import { readEndpoint, type StoreEndpointsContext } from '../fhir/store/endpoints.js'
import { ReleaseReader } from '../fhir/store/reader.js'
import { criteriaOf, LocalSearch, type SearchValues, searchRules } from '../fhir/store/search.js'
import type { StoredJson } from '../fhir/store/stored.js'
import { ApiError } from '../http/errors.js'
import { FHIR_BASE } from '../http/pathBase.js'
import { type CanonicalValue, QUESTIONNAIRE_STORE } from './declaration.js'
import { QUESTIONNAIRE_LAYOUT } from './layout.js'
import { consultSource, heldOrders } from './consult.js'
import { currentFirst, type HeldOrder } from './order.js'
import { QUESTIONNAIRE_SOURCES, QUESTIONNAIRE_TIMEOUT_MS } from './settings.js'
import { QuestionnaireSources } from './sources.js'

const TYPE = 'Questionnaire'
const SEARCH = QUESTIONNAIRE_STORE.types[0]?.search
if (!SEARCH) throw new Error('the Questionnaire store declares no search')
const QUESTIONNAIRE_SEARCH = SEARCH

export interface Questionnaires extends Pick<StoreEndpointsContext, 'tag' | 'source' | 'waits'> {
  db: Db
  reader: ReleaseReader
  sources: QuestionnaireSources
  clock: () => number
}

/** One app's Questionnaires: the held ones (main file) and the configured addresses to fetch from. */
export function createQuestionnaires({ db, config, clock, upstream }: AppContext): Questionnaires {
  const reader = new ReleaseReader(db, QUESTIONNAIRE_LAYOUT)
  const sources = new QuestionnaireSources(settingOf(config, QUESTIONNAIRE_SOURCES) ?? [], {
    ...upstream,
    timeoutMs: settingOf(config, QUESTIONNAIRE_TIMEOUT_MS) ?? 10_000,
  })
  return {
    tag: 'questionnaires',
    db,
    reader,
    sources,
    clock,
    // Never replaced by a release: an unreachable branch, kept for the shared search source's contract.
    source: new LocalSearch(reader, QUESTIONNAIRE_STORE.types, () => new ApiError(400, { detail: 'stale' })),
    ...(sources.addresses.length > 0 ? { waits: 'call' as const } : {}),
  }
}

const UPSTREAM_ERRORS = {
  502: {
    description:
      'A configured questionnaire source refused, failed, redirected elsewhere or sent something else',
  },
  503: { description: 'A configured questionnaire source is rate limiting (throttled)' },
  504: { description: 'A configured questionnaire source did not answer in time' },
}

interface Match {
  stored: StoredJson
  order: HeldOrder
}

/** Every held match of a search, with what orders versions. */
function heldMatches(state: Questionnaires, values: SearchValues): Match[] {
  const criteria = criteriaOf(TYPE, QUESTIONNAIRE_SEARCH, values)
  return state.reader.snapshot(() => {
    const { rows } = state.reader.page(criteria, 0, Number.MAX_SAFE_INTEGER)
    const order = state.db.statement(
      'SELECT rid, url, version, status_rank AS statusRank, date, origin, etag, last_modified AS lastModified FROM questionnaire_held WHERE rid = ?',
    )
    return rows.map((row) => ({ stored: row.stored, order: order.get(row.rid) as HeldOrder }))
  })
}

function searchEndpoint(state: Questionnaires): Endpoint {
  const params = Object.fromEntries(
    Object.entries(QUESTIONNAIRE_SEARCH.params).map(([name, declared]) => [name, declared.spec]),
  ) as ParamShape
  return defineEndpoint({
    method: 'GET',
    path: `${FHIR_BASE}/${TYPE}`,
    tag: state.tag,
    summary: 'Search Questionnaires (the whole list, with total)',
    description:
      'Searchset Bundle of every match, with `total` (no paging). `url=<canonical>|<version>` (or `url` with `version`) is exactly that version; `url` alone is every held version, the current one first: active before draft before retired, then the highest version (dot-separated numbers compared as numbers), then the latest `date`. A canonical under a configured address with no copy held is fetched from there (and revalidated on later searches).',
    params,
    rules: (values, services) =>
      searchRules(TYPE, QUESTIONNAIRE_SEARCH, values as SearchValues, services.config.baseUrl),
    fhir: { resource: TYPE, interaction: 'search-type' },
    waits: state.waits,
    responses: { 200: { description: 'Searchset Bundle' }, ...UPSTREAM_ERRORS },
    handler: async (request, services) => {
      const { _format: _, ...values } = request.params as SearchValues & { _format?: string }
      const canonical = values.url as CanonicalValue | undefined
      const address = canonical && state.sources.addressOf(canonical.url)
      if (canonical && address) {
        await consultSource(
          state.db,
          state.sources,
          address,
          canonical.url,
          heldOrders(state.db, canonical.url),
          {
            signal: request.signal,
            now: new Date(state.clock()).toISOString(),
          },
        )
      }
      // Read after the source was asked: what it answered is held by now.
      const matches = heldMatches(state, values)
      const version = canonical?.version ?? values.version
      if (canonical && version === undefined) matches.sort((a, b) => currentFirst(a.order, b.order))
      const base = `${services.config.baseUrl}${FHIR_BASE}/${TYPE}`
      const query = request.query.toString()
      return {
        body: searchsetBundle({
          baseUrl: services.config.baseUrl,
          self: query ? `${base}?${query}` : base,
          total: matches.length,
          matches: matches.map((match) => match.stored),
        }),
      }
    },
  })
}

export function questionnaireEndpoints(state: Questionnaires): Endpoint[] {
  return [readEndpoint(state, TYPE, 'Read a Questionnaire, as published'), searchEndpoint(state)]
}
