import type { IndexDeclaration } from '../fhir/store/declaration.js'
import { storeLayout } from '../fhir/store/schema.js'

/**
 * What each Questionnaire search parameter indexes, and so the tables of the store. Apart from the
 * parameters' rules (declaration.ts takes each index from here) because opening a store needs these and not
 * those: every command opens one, and the rules load zod (a third of a command's start). Token parameters
 * carry the number their index rows are written under: append, never renumber.
 */
export const QUESTIONNAIRE_INDEXES = {
  url: { kind: 'token', number: 1, paths: ['url'] },
  version: { kind: 'token', number: 2, paths: ['version'] },
  name: { kind: 'text', column: 'name', paths: ['name'] },
  'name:exact': { kind: 'token', number: 3, paths: ['name'] },
  'name:contains': { kind: 'text', column: 'name', paths: ['name'], tokenizer: 'trigram' },
  title: { kind: 'text', column: 'title', paths: ['title'] },
  'title:exact': { kind: 'token', number: 4, paths: ['title'] },
  'title:contains': { kind: 'text', column: 'title', paths: ['title'], tokenizer: 'trigram' },
  status: { kind: 'token', number: 5, paths: ['status'] },
  code: { kind: 'token', number: 6, paths: ['code'] },
  publisher: { kind: 'text', column: 'publisher', paths: ['publisher'] },
  identifier: { kind: 'token', number: 7, paths: ['identifier'] },
} as const satisfies Record<string, IndexDeclaration>

export const QUESTIONNAIRE_LAYOUT = storeLayout({
  name: 'questionnaires',
  prefix: 'qst',
  types: [
    {
      type: 'Questionnaire',
      search: {
        params: Object.fromEntries(
          Object.entries(QUESTIONNAIRE_INDEXES).map(([name, index]) => [name, { index }]),
        ),
      },
    },
  ],
})
