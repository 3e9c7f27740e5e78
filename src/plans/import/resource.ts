import { EXTENSIONS, PLAN_NET_INSURANCE_PLAN, PROGRAM_NAMES, type Program, SYSTEMS } from '../vocabulary.js'
import type { Cost, CostKind } from './costs.js'

type Resource = Record<string, unknown>

/**
 * Pieces of an InsurancePlan as this service writes it (Da Vinci PDex Plan-Net's InsurancePlan where it
 * fits), shared by the ACA and Medicare Advantage builds.
 */

/** Where a plan came from: `meta.source` names the release, its extensions the plan year and the files. */
export function planMeta(release: string, year: number, files: readonly string[]): Resource {
  return {
    profile: [PLAN_NET_INSURANCE_PLAN],
    source: `urn:svc:plan-release:${release}`,
    extension: [
      { url: EXTENSIONS.release, valueString: release },
      { url: EXTENSIONS.planYear, valueInteger: year },
      ...files.map((file) => ({ url: EXTENSIONS.sourceFile, valueString: file })),
    ],
  }
}

/** Plan-Net's product type of a plan: a qualified health plan, or Medicare Advantage (HMO or other). */
function productType(program: Program, planTypes: readonly string[]) {
  if (program === 'qhp') return { code: 'qhp', display: 'Qualified Health Plan' }
  return planTypes.includes('HMO')
    ? { code: 'mediadvhmo', display: 'Medicare Advantage HMO' }
    : { code: 'mediadv', display: 'Medicare Advantage' }
}

/**
 * A plan's one `type` (Plan-Net allows one): Plan-Net's product type, the program, and the plan types the
 * files give (HMO, PPO, ...), with the files' words as text.
 */
export const insurancePlanType = (
  program: Program,
  planTypes: readonly string[],
  words: string,
): Resource => ({
  coding: [
    { system: SYSTEMS.productType, ...productType(program, planTypes) },
    { system: SYSTEMS.program, code: program, display: PROGRAM_NAMES[program] },
    ...planTypes.map((code) => ({ system: SYSTEMS.planType, code, display: code })),
  ],
  text: words ? `${PROGRAM_NAMES[program]}: ${words}` : PROGRAM_NAMES[program],
})

/** A plan year as its period: the year's first and last day unless the file says otherwise. */
export const planPeriod = (year: number, start?: string, end?: string): Resource => ({
  start: start && start.startsWith(String(year)) ? start : `${year}-01-01`,
  end: end && end.startsWith(String(year)) ? end : `${year}-12-31`,
})

export const text = (value: string): Resource => ({ text: value })

/**
 * The JSON of `object` with one more member, last, whose value is JSON text already written (a plan's
 * cost-sharing lists, written from texts made once per distinct cell).
 */
export function jsonWithMember(object: Resource, name: string, json: string): string {
  const head = JSON.stringify(object)
  return `${head === '{}' ? '{' : `${head.slice(0, -1)},`}${JSON.stringify(name)}:${json}}`
}

const COST_NAMES: Record<CostKind, string> = { copay: 'Copay', coinsurance: 'Coinsurance' }

/** A general cost (deductible, out-of-pocket maximum, premium): dollars, or a comment when the file words it so. */
export function generalCost(
  kind: string,
  label: string,
  value: { dollars?: number; comment?: string },
): Resource {
  return {
    type: { coding: [{ system: SYSTEMS.costKind, code: kind }], text: label },
    ...(value.dollars !== undefined ? { cost: { value: value.dollars, currency: 'USD' } } : {}),
    ...(value.comment ? { comment: value.comment } : {}),
  }
}

/**
 * What a member pays for one benefit in one network: an amount (USD) or a percent, with its qualifiers (the
 * tier, when the plan has two in network; "after deductible", "per stay", "No Charge").
 */
export function specificCost(
  cost: Exclude<Cost, { kind: 'none' }>,
  column: CostKind,
  network: 'in-network' | 'out-of-network',
  tier?: string,
): Resource {
  const kind = cost.kind === 'text' ? column : cost.kind
  const qualifiers = [
    ...(tier ? [tier] : []),
    ...(cost.kind === 'text' ? [cost.text] : [...(cost.noCharge ? ['No Charge'] : []), ...cost.qualifiers]),
  ]
  // Kept lean: a plan holds a few hundred of these per variant, and every read and search page carries them.
  return {
    type: text(COST_NAMES[kind]),
    applicability: { coding: [{ system: SYSTEMS.applicability, code: network }] },
    ...(qualifiers.length > 0 ? { qualifiers: qualifiers.map(text) } : {}),
    ...(cost.kind === 'text'
      ? {}
      : {
          value:
            kind === 'copay'
              ? { value: cost.value, system: SYSTEMS.currency, code: 'USD' }
              : { value: cost.value, system: SYSTEMS.ucum, code: '%' },
        }),
  }
}
