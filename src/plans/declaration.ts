import { z } from 'zod'
import { param } from '../api/params.js'
import type { SearchParam, StoreDeclaration } from '../fhir/store/declaration.js'
import { storeLayout } from '../fhir/store/schema.js'
import type { StoredJson } from '../fhir/store/stored.js'
import {
  containsParam,
  exactParam,
  idParam,
  pagingParams,
  textParam,
  tokenParam,
} from '../fhir/store/searchParams.js'
import { STATE_NAMES } from '../geo/counties.js'
import { countiesCovered, coverageOf, storedCoverage } from './coverage.js'
import { EXTENSIONS, PLAN_TYPES, SYSTEMS } from './vocabulary.js'

/**
 * The Plan Benefits store: InsurancePlan and its search parameters. Token parameters carry the number their
 * index rows are written under in release files: append, never renumber.
 */

type Resource = Record<string, unknown>

/** Page sizes of a plan search (spec, Paging): 1..50, default 10, larger refused. */
const COUNT = { max: 50, default: 10 }

const TYPE_CODES = ['qhp', 'ma', ...PLAN_TYPES.map((type) => type.toLowerCase())] as const

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

/** The codes of one system in a resource's `type` CodeableConcepts. */
function typeCodes(resource: Resource, system: string): string[] {
  return asArray(resource.type).flatMap((concept) =>
    asArray((concept as { coding?: unknown }).coding).flatMap((coding) => {
      const { system: codingSystem, code } = coding as { system?: unknown; code?: unknown }
      return codingSystem === system && typeof code === 'string' ? [code] : []
    }),
  )
}

function planYear(resource: Resource): string | undefined {
  const start = (resource.period as { start?: unknown } | undefined)?.start
  return typeof start === 'string' && /^\d{4}/.test(start) ? start.slice(0, 4) : undefined
}

/**
 * A token parameter whose index rows are worked out from the whole plan: its codes, with no system, or its
 * (system, code) entries.
 */
function derivedParam(
  options: {
    number: number
    spec: SearchParam['spec']
    priority: number
    internal?: boolean
  } & (
    | { codes: (resource: Resource) => Iterable<string> }
    | { entries: (resource: Resource) => Iterable<[system: string, code: string]> }
  ),
): SearchParam {
  return {
    spec: options.spec,
    role: { kind: 'criterion' },
    internal: options.internal,
    priority: options.priority,
    index: {
      kind: 'token',
      number: options.number,
      *derive(resource) {
        if ('entries' in options) yield* options.entries(resource)
        else for (const code of options.codes(resource)) yield ['', code]
      },
    },
    criteria: (value) => [{ kind: 'token', param: options.number, code: String(value) }],
  }
}

const upper = (pattern: RegExp, message: string) =>
  z
    .string()
    .transform((value) => value.toUpperCase())
    .pipe(z.string().regex(pattern, message))

const STATES = Object.keys(STATE_NAMES)

/** The token system of a county a plan is sold in only part of (no system: the whole county). */
const PARTIAL = 'partial'

/** The partition a plan belongs to (`qhp-2025`): what an import replaces whole. Not a search parameter. */
export const PARTITION_PARAM = 8

const insurancePlanSearch = {
  _id: idParam(),
  identifier: {
    ...tokenParam({
      number: 1,
      paths: ['identifier'],
      description:
        'A plan id: `system|value` or value. ACA: the 14-character HIOS plan id or a 17-character variant PlanId; Medicare Advantage: the contract-plan-segment id (H1234-001-000).',
    }),
    priority: 0,
  },
  name: textParam({
    column: 'name',
    paths: ['name'],
    match: 'start',
    description: 'The plan name starts with this (case and accents ignored), as FHIR string search has it.',
  }),
  'name:contains': containsParam({
    column: 'name',
    paths: ['name'],
    description: 'The plan name holds this anywhere (case and accents ignored); 3 characters or more.',
  }),
  'name:exact': exactParam({
    number: 2,
    paths: ['name'],
    description: 'The plan name is exactly this (case and accents as written).',
  }),
  state: derivedParam({
    number: 3,
    priority: 2,
    spec: param.custom(
      upper(/^[A-Z]{2}$/, 'must be a two-letter state, DC or territory code').refine(
        (value) => STATES.includes(value),
        'must be a two-letter state, DC or territory code',
      ),
      'Plans sold in this state, DC or territory (USPS code, e.g. FL): in any of its counties or in the whole state.',
      'token',
    ),
    codes: (resource) => coverageOf(resource).states,
  }),
  county: derivedParam({
    number: 4,
    priority: 1,
    spec: param.string(
      'Plans sold in this county (five-digit FIPS code, e.g. 12031), whole-state plans and plans sold in part of it included; the latter are marked on their entry.',
      { pattern: /^\d{5}$/ },
    ),
    // A county the plan is sold in only part of goes under PARTIAL: what the county search marks.
    *entries(resource) {
      const coverage = coverageOf(resource)
      for (const fips of countiesCovered(coverage))
        yield [coverage.counties.get(fips)?.partial ? PARTIAL : '', fips]
    },
  }),
  type: derivedParam({
    number: 5,
    priority: 4,
    spec: param.custom(
      z
        .string()
        .transform((value) => value.toLowerCase())
        .pipe(z.enum(TYPE_CODES, { error: `must be one of qhp, ma, ${PLAN_TYPES.join(', ')} (any case)` })),
      `A program (\`qhp\`: ACA Marketplace, \`ma\`: Medicare Advantage) or a plan type (${PLAN_TYPES.join(', ')}); case-insensitive.`,
      'token',
    ),
    codes: (resource) =>
      [...typeCodes(resource, SYSTEMS.program), ...typeCodes(resource, SYSTEMS.planType)].map((code) =>
        code.toLowerCase(),
      ),
  }),
  'plan-year': derivedParam({
    number: 6,
    priority: 3,
    spec: param.string('The plan year (four digits).', { pattern: /^\d{4}$/ }),
    codes: (resource) => [planYear(resource) ?? []].flat(),
  }),
  'owned-by': {
    ...tokenParam({
      number: 7,
      paths: ['ownedBy.identifier'],
      description: 'The issuer: HIOS issuer id (ACA) or contract number (Medicare Advantage).',
    }),
    priority: 1,
  },
  _partition: derivedParam({
    number: PARTITION_PARAM,
    priority: 5,
    internal: true,
    spec: param.string('The partition a plan belongs to.'),
    codes: (resource) => {
      const program = typeCodes(resource, SYSTEMS.program)[0]
      const year = planYear(resource)
      return program && year ? [`${program}-${year}`] : []
    },
  }),
  ...pagingParams(COUNT),
} satisfies Record<string, SearchParam>

const PARTIAL_MARK = Buffer.from(EXTENSIONS.partialCounty)

/** A county search marks the plans sold in only part of that county, with the ZIP codes they are sold in. */
function markPartialCounty(stored: StoredJson, values: Record<string, unknown>): Resource[] | undefined {
  // Most plans are sold in whole counties: their bytes say so without being parsed.
  if (typeof values.county !== 'string' || !stored.bytes.includes(PARTIAL_MARK)) return undefined
  const county = storedCoverage(stored.bytes).counties.get(values.county)
  if (!county?.partial) return undefined
  return [
    {
      url: EXTENSIONS.partialMatch,
      extension: [
        { url: 'county', valueString: values.county },
        ...county.zips.map((zip) => ({ url: 'zipCode', valueString: zip })),
      ],
    },
  ]
}

export const PLANS_STORE: StoreDeclaration = {
  name: 'plans',
  prefix: 'plan',
  types: [
    {
      type: 'InsurancePlan',
      search: {
        count: COUNT,
        total: true,
        params: insurancePlanSearch,
        mark: { param: 'county', system: PARTIAL, of: markPartialCounty },
      },
    },
  ],
}

export const PLANS_LAYOUT = storeLayout(PLANS_STORE)
