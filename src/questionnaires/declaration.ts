import { z } from 'zod'
import { param } from '../api/params.js'
import type { SearchParam, StoreDeclaration } from '../fhir/store/declaration.js'
import { storeLayout } from '../fhir/store/schema.js'
import {
  codeParam,
  containsParam,
  exactParam,
  idParam,
  textParam,
  tokenParam,
} from '../fhir/store/searchParams.js'

/**
 * The Questionnaire store and its search parameters. Token parameters carry the number their index rows are
 * written under: append, never renumber. Questionnaires live in the main file's tables (no release files):
 * an import or a fetch changes single resources, in one transaction.
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

const URL_PARAM = 1
const VERSION_PARAM = 2

const stringSearch = (element: 'name' | 'title', exactNumber: number) => ({
  [element]: textParam({
    column: element,
    paths: [element],
    match: 'start',
    description: `The ${element} starts with this (case and accents ignored), as FHIR string search has it.`,
  }),
  [`${element}:exact`]: exactParam({
    number: exactNumber,
    paths: [element],
    description: `The ${element} is exactly this (case and accents as written).`,
  }),
  [`${element}:contains`]: containsParam({
    column: element,
    paths: [element],
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
    index: { kind: 'token', number: URL_PARAM, paths: ['url'] },
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
    index: { kind: 'token', number: VERSION_PARAM, paths: ['version'] },
    criteria: (value) => [{ kind: 'token', param: VERSION_PARAM, code: String(value) }],
    priority: 1,
  },
  ...stringSearch('name', 3),
  ...stringSearch('title', 4),
  status: {
    ...codeParam({ number: 5, paths: ['status'], values: STATUSES, description: 'Publication status.' }),
    priority: 2,
  },
  code: {
    spec: param.custom(
      CODE,
      'A code of the questionnaire (`code`): `code`, `system|code`, or `|code` for a code given with no system.',
      'token',
    ),
    role: { kind: 'criterion' },
    index: { kind: 'token', number: 6, paths: ['code'] },
    criteria: (value) => {
      const token = value as { system?: string; code: string }
      return [
        {
          kind: 'token',
          param: 6,
          code: token.code,
          ...(token.system !== undefined ? { systems: [token.system] } : {}),
        },
      ]
    },
  },
  publisher: textParam({
    column: 'publisher',
    paths: ['publisher'],
    match: 'start',
    description: 'The publisher starts with this (case and accents ignored).',
  }),
  identifier: tokenParam({
    number: 7,
    paths: ['identifier'],
    description: 'A business identifier: `system|value` or value.',
  }),
} satisfies Record<string, SearchParam>

export const QUESTIONNAIRE_STORE: StoreDeclaration = {
  name: 'questionnaires',
  prefix: 'qst',
  types: [
    {
      type: 'Questionnaire',
      search: { count: 'whole', total: true, params: questionnaireSearch },
    },
  ],
}

export const QUESTIONNAIRE_LAYOUT = storeLayout(QUESTIONNAIRE_STORE)
