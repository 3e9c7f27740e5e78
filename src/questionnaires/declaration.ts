import { z } from 'zod'
import { param } from '../api/params.js'
import type { SearchParam, StoreDeclaration } from '../fhir/store/declaration.js'
import {
  codeParam,
  containsParam,
  exactParam,
  idParam,
  textParam,
  tokenParam,
} from '../fhir/store/searchParams.js'
import { QUESTIONNAIRE_INDEXES as INDEXES, QUESTIONNAIRE_LAYOUT } from './layout.js'

/**
 * The Questionnaire store and its search parameters, each indexed as layout.ts says. Questionnaires live in
 * the main file's tables (no release files): an import or a fetch changes single resources, in one
 * transaction.
 */

export const STATUSES = ['draft', 'active', 'retired', 'unknown'] as const

/** A canonical as a search gives it: `url` alone, or `url|version` (split at the last bar). */
export interface CanonicalValue {
  url: string
  version?: string
}

const CANONICAL = z
  .string()
  .min(1, 'must be at least 1 character long')
  .max(1024, 'must be at most 1024 characters long')
  .transform((value, ctx): CanonicalValue => {
    const bar = value.lastIndexOf('|')
    const url = bar === -1 ? value : value.slice(0, bar)
    const version = bar === -1 ? undefined : value.slice(bar + 1)
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(url) || version === '') {
      ctx.addIssue({ code: 'custom', message: 'must be a canonical URL, optionally followed by |version' })
      return z.NEVER
    }
    return version === undefined ? { url } : { url, version }
  })

/** A token with FHIR's three forms: `code`, `system|code`, and `|code` (a code with no system). */
const CODE = z
  .string()
  .min(1, 'must be at least 1 character long')
  .max(256, 'must be at most 256 characters long')
  .transform((value, ctx) => {
    const bar = value.indexOf('|')
    const system = bar === -1 ? undefined : value.slice(0, bar)
    const code = bar === -1 ? value : value.slice(bar + 1)
    if (code === '') {
      ctx.addIssue({ code: 'custom', message: 'must be code, system|code or |code' })
      return z.NEVER
    }
    return { system, code }
  })

const URL_PARAM = INDEXES.url.number
const VERSION_PARAM = INDEXES.version.number

const stringSearch = (element: 'name' | 'title') => ({
  [element]: textParam({
    ...INDEXES[element],
    match: 'start',
    description: `The ${element} starts with this (case and accents ignored), as FHIR string search has it.`,
  }),
  [`${element}:exact`]: exactParam({
    ...INDEXES[`${element}:exact`],
    description: `The ${element} is exactly this (case and accents as written).`,
  }),
  [`${element}:contains`]: containsParam({
    ...INDEXES[`${element}:contains`],
    description: `The ${element} holds this anywhere (case and accents ignored); 3 characters or more.`,
  }),
})

const questionnaireSearch = {
  _id: idParam(),
  url: {
    spec: param.custom(
      CANONICAL,
      'A canonical URL: `url|version` is exactly that version; `url` alone is every held version, the current one first (active before draft before retired, then the highest version, then the latest date). A canonical under a configured address is fetched when no copy is held.',
      'uri',
    ),
    role: { kind: 'criterion' },
    index: INDEXES.url,
    criteria: (value) => {
      const canonical = value as CanonicalValue
      return [
        { kind: 'token', param: URL_PARAM, code: canonical.url },
        ...(canonical.version === undefined
          ? []
          : [{ kind: 'token' as const, param: VERSION_PARAM, code: canonical.version }]),
      ]
    },
  },
  version: {
    spec: param.string('The business version, exactly.', { max: 256 }),
    role: { kind: 'criterion' },
    index: INDEXES.version,
    criteria: (value) => [{ kind: 'token', param: VERSION_PARAM, code: String(value) }],
    priority: 1,
  },
  ...stringSearch('name'),
  ...stringSearch('title'),
  status: {
    ...codeParam({ ...INDEXES.status, values: STATUSES, description: 'Publication status.' }),
    priority: 2,
  },
  code: {
    spec: param.custom(
      CODE,
      'A code of the questionnaire (`code`): `code`, `system|code`, or `|code` for a code given with no system.',
      'token',
    ),
    role: { kind: 'criterion' },
    index: INDEXES.code,
    criteria: (value) => {
      const token = value as { system?: string; code: string }
      return [
        {
          kind: 'token',
          param: INDEXES.code.number,
          code: token.code,
          ...(token.system !== undefined ? { systems: [token.system] } : {}),
        },
      ]
    },
  },
  publisher: textParam({
    ...INDEXES.publisher,
    match: 'start',
    description: 'The publisher starts with this (case and accents ignored).',
  }),
  identifier: tokenParam({
    ...INDEXES.identifier,
    description: 'A business identifier: `system|value` or value.',
  }),
} satisfies Record<string, SearchParam>

export const QUESTIONNAIRE_STORE: StoreDeclaration = {
  name: QUESTIONNAIRE_LAYOUT.declaration.name,
  prefix: QUESTIONNAIRE_LAYOUT.declaration.prefix,
  types: [
    {
      type: 'Questionnaire',
      search: { count: 'whole', total: true, params: questionnaireSearch },
    },
  ],
}
