import { countyArea, wholeStateArea } from '../coverage.js'
import { EXTENSIONS, SYSTEMS } from '../vocabulary.js'
import type { BuildContext } from './build.js'
import { type Cost, type CostKind, parseCost, parseDate, parseMoney } from './costs.js'
import {
  generalCost,
  insurancePlanType,
  jsonWithMember,
  planMeta,
  planPeriod,
  specificCost,
  text,
} from './resource.js'
import { BENEFIT_FIELDS, GENERAL_COST_COLUMN } from './stage.js'

type Resource = Record<string, unknown>

/**
 * The ACA Marketplace plans of one plan year, from the staged Plan Attributes (one row per variant),
 * Benefits and Cost Sharing, Service Area and Network rows: one InsurancePlan per 14-character plan, one
 * `plan[]` per variant.
 */

interface VariantRow {
  variant: string
  file: number
  line: number
  data: Record<string, string>
}

import type { BenefitRow } from './staging.js'

/** A benefit field's position in a staged row, by name: looked up once, read 1.6 million times. */
const AT = Object.fromEntries(BENEFIT_FIELDS.map((name, index) => [name, index])) as Record<
  (typeof BENEFIT_FIELDS)[number],
  number
>

const field = (row: BenefitRow, name: (typeof BENEFIT_FIELDS)[number]) => row.fields[AT[name]] ?? ''

const ACA_PLAN_TYPES = new Set(['HMO', 'PPO', 'EPO', 'POS', 'Indemnity'])

const GENERAL_BENEFIT: Record<string, string> = {
  MEHB: 'medical',
  DEHB: 'drug',
  TEHB: 'medical and drug combined',
}
const GENERAL_TIER: Record<string, string> = {
  InnTier1: 'in network (tier 1)',
  InnTier2: 'in network tier 2',
  OutOfNet: 'out of network',
  CombInnOon: 'in and out of network combined',
}
const GENERAL_SCOPE: Record<string, string> = {
  Individual: 'individual',
  FamilyPerPerson: 'family, per person',
  FamilyPerGroup: 'family, per group',
  Coinsurance: 'coinsurance',
}

/** A general cost column as read: what it costs, its label, and its place in a plan's list. */
interface GeneralCostColumn {
  kind: 'moop' | 'deductible' | 'deductible-coinsurance'
  label: string
  order: number
}

/** Every variant has the same few dozen columns: each name is parsed once (undefined: not a general cost). */
const generalCostColumns = new Map<string, GeneralCostColumn | undefined>()

function generalCostColumn(column: string): GeneralCostColumn | undefined {
  if (generalCostColumns.has(column)) return generalCostColumns.get(column)
  const parts = GENERAL_COST_COLUMN.exec(column)
  let read: GeneralCostColumn | undefined
  if (parts && (parts[2] || parts[5])) {
    const [, benefit = '', , tier = '', scope = '', moop] = parts
    read = {
      kind: moop ? 'moop' : scope === 'Coinsurance' ? 'deductible-coinsurance' : 'deductible',
      label: `${moop ? 'Maximum out-of-pocket' : scope === 'Coinsurance' ? 'Coinsurance after deductible' : 'Deductible'}, ${GENERAL_BENEFIT[benefit]}, ${GENERAL_TIER[tier]}${scope === 'Coinsurance' ? '' : `, ${GENERAL_SCOPE[scope]}`}`,
      order: generalCostOrder(parts),
    }
  }
  generalCostColumns.set(column, read)
  return read
}

/** One variant's deductibles and out-of-pocket maximums, from the general cost columns it has. */
function generalCosts(row: VariantRow, report: (message: string) => void): Resource[] {
  const costs: Resource[] = []
  const columns = Object.keys(row.data).flatMap((column) => {
    const read = generalCostColumn(column)
    return read ? [{ column, ...read }] : []
  })
  // In one order whatever the file's column order: out-of-pocket maximums, then deductibles, by benefit, tier, scope.
  columns.sort((a, b) => a.order - b.order)
  for (const { column, kind, label } of columns) {
    const raw = row.data[column] as string
    if (kind === 'deductible-coinsurance') {
      const cost = parseCost(raw, 'coinsurance')
      if (cost.kind === 'none') continue
      if (cost.kind === 'text') report(`${column} "${raw}" fits no known cost form; kept as text`)
      costs.push(
        generalCost(kind, label, {
          comment:
            cost.kind === 'text'
              ? cost.text
              : `${cost.value}% coinsurance${cost.qualifiers.map((q) => ` ${q}`).join('')}`,
        }),
      )
      continue
    }
    const money = parseMoney(raw)
    if (money.kind === 'none') continue
    if (money.kind === 'text') report(`${column} "${raw}" is not an amount; kept as text`)
    costs.push(
      generalCost(
        kind,
        label,
        money.kind === 'text'
          ? { comment: money.text }
          : { dollars: money.value, ...(money.per ? { comment: `per ${money.per}` } : {}) },
      ),
    )
  }
  return costs
}

const rank = (table: Record<string, string>, key: string) => Object.keys(table).indexOf(key)

function generalCostOrder([, benefit = '', deductible, tier = '', scope = '']: RegExpExecArray): number {
  return (
    (deductible ? 1 : 0) * 1000 +
    rank(GENERAL_BENEFIT, benefit) * 100 +
    rank(GENERAL_TIER, tier) * 10 +
    rank(GENERAL_SCOPE, scope)
  )
}

const metalCode = (level: string) => level.toLowerCase().replace(/\s+/g, '-')

const CELLS: readonly {
  name: (typeof BENEFIT_FIELDS)[number]
  column: CostKind
  network: 'in-network' | 'out-of-network'
  tier?: string
}[] = [
  { name: 'CopayInnTier1', column: 'copay', network: 'in-network', tier: 'Tier 1' },
  { name: 'CopayInnTier2', column: 'copay', network: 'in-network', tier: 'Tier 2' },
  { name: 'CopayOutofNet', column: 'copay', network: 'out-of-network' },
  { name: 'CoinsInnTier1', column: 'coinsurance', network: 'in-network', tier: 'Tier 1' },
  { name: 'CoinsInnTier2', column: 'coinsurance', network: 'in-network', tier: 'Tier 2' },
  { name: 'CoinsOutofNet', column: 'coinsurance', network: 'out-of-network' },
]
/** The cell of the other kind in the same network and tier (copay <-> coinsurance), by position in CELLS. */
const PARTNER = [3, 4, 5, 0, 1, 2]

const covered = (row: BenefitRow) => /^covered$/i.test(field(row, 'IsCovered'))

/**
 * Cost cells read once per distinct text: a national file holds a few thousand distinct strings in 10
 * million cells. The results are never changed, so one object serves every cell that reads alike, and one
 * JSON text every specificCost entry (they are most of a plan's bytes: written from these texts, they are
 * not serialized again for each of the 1.6 million rows).
 */
class CostCells {
  // Keyed by the cell's text alone (a key joined of several parts would be a new string to hash per cell).
  readonly #parsed: Record<CostKind, Map<string, Cost>> = { copay: new Map(), coinsurance: new Map() }
  /** Per CELLS position, tiers unnamed then named. */
  readonly #entries = CELLS.map(() => [new Map<string, string>(), new Map<string, string>()] as const)
  readonly #names = new Map<string, string>()

  parse(raw: string, column: CostKind): Cost {
    return once(this.#parsed[column], raw, () => parseCost(raw, column))
  }

  /** The cell at CELLS position `at` as a specificCost entry's JSON, written once per distinct cell. */
  entryJson(at: number, raw: string, cost: Exclude<Cost, { kind: 'none' }>, tiered: boolean): string {
    const cell = CELLS[at] as (typeof CELLS)[number]
    return once(this.#entries[at]?.[tiered ? 1 : 0] as Map<string, string>, raw, () =>
      JSON.stringify(specificCost(cost, cell.column, cell.network, tiered ? cell.tier : undefined)),
    )
  }

  /** A benefit's name as a CodeableConcept's JSON. */
  nameJson(name: string): string {
    return once(this.#names, name, () => JSON.stringify(text(name)))
  }
}

function once<T>(made: Map<string, T>, key: string, make: () => T): T {
  let value = made.get(key)
  if (value === undefined) {
    value = make()
    made.set(key, value)
  }
  return value
}

/**
 * What a member pays for each covered benefit of one variant, cell by cell: the JSON of a plan's
 * `specificCost`, undefined when no benefit has a cost.
 */
function specificCostsJson(
  category: string,
  rows: readonly BenefitRow[],
  cells: CostCells,
  context: BuildContext,
): string | undefined {
  // Tiers are named only where the variant has a second in-network tier.
  const tiered = rows.some(
    (row) =>
      cells.parse(field(row, 'CopayInnTier2'), 'copay').kind !== 'none' ||
      cells.parse(field(row, 'CoinsInnTier2'), 'coinsurance').kind !== 'none',
  )
  const benefits: string[] = []
  for (const row of rows) {
    if (!covered(row)) continue
    const raws = CELLS.map((cell) => field(row, cell.name))
    const parsed = CELLS.map((cell, index) => cells.parse(raws[index] as string, cell.column))
    const costs: string[] = []
    CELLS.forEach((cell, index) => {
      const cost = parsed[index] as Cost
      if (cost.kind === 'none') return
      if (cost.kind === 'text')
        context.report(
          row.file,
          row.line,
          `${cell.name} "${raws[index]}" fits no known cost form; kept as text`,
        )
      // "No Charge" beside an amount of the other kind in the same tier says nothing more: the amount is the cost.
      else if (cost.noCharge && cost.qualifiers.length === 0) {
        const partner = parsed[PARTNER[index] as number] as Cost
        if ((partner.kind === 'copay' || partner.kind === 'coinsurance') && !partner.noCharge) return
      }
      costs.push(cells.entryJson(index, raws[index] as string, cost, tiered))
    })
    if (costs.length > 0)
      benefits.push(`{"type":${cells.nameJson(field(row, 'BenefitName'))},"cost":[${costs.join(',')}]}`)
  }
  return benefits.length > 0
    ? `[{"category":${cells.nameJson(category)},"benefit":[${benefits.join(',')}]}]`
    : undefined
}

/** Each benefit the files list and whether it is covered, with its limits, exclusions and explanation. */
function coverageBenefits(rows: readonly BenefitRow[]): Resource[] {
  return rows.map((row) => {
    const quantity = Number(field(row, 'LimitQty'))
    const limited =
      /^(yes|y)$/i.test(field(row, 'QuantLimitOnSvc')) &&
      Number.isFinite(quantity) &&
      field(row, 'LimitQty') !== ''
    const notes = [
      field(row, 'Exclusions') && `Exclusions: ${field(row, 'Exclusions')}`,
      field(row, 'Explanation') && `Explanation: ${field(row, 'Explanation')}`,
    ].filter(Boolean)
    return {
      extension: [{ url: EXTENSIONS.covered, valueBoolean: covered(row) }],
      type: text(field(row, 'BenefitName')),
      ...(notes.length > 0 ? { requirement: notes.join(' ') } : {}),
      ...(limited
        ? {
            limit: [
              {
                value: {
                  value: quantity,
                  ...(field(row, 'LimitUnit') ? { unit: field(row, 'LimitUnit') } : {}),
                },
              },
            ],
          }
        : {}),
    }
  })
}

export async function buildAcaPlans(context: BuildContext): Promise<void> {
  const { db } = context.staging
  const { year } = context
  const plans = db
    .prepare('SELECT DISTINCT plan FROM variant WHERE year = ? ORDER BY plan')
    .pluck()
    .all(year) as string[]
  const variantsOf = db.prepare(
    'SELECT variant, file, line, data FROM variant WHERE year = ? AND plan = ? ORDER BY variant, rowid',
  )
  const benefits = context.staging.sortedBenefits(year)
  const cells = new CostCells()
  try {
    const areaOf = db.prepare(
      'SELECT whole, county, partial, zips, file, line FROM area WHERE year = ? AND state = ? AND issuer = ? AND area = ? ORDER BY rowid',
    )
    const networkOf = db.prepare(
      'SELECT name, file FROM network WHERE year = ? AND state = ? AND issuer = ? AND network = ? ORDER BY rowid LIMIT 1',
    )
    const areas = new Map<string, { coverage: Resource[]; files: Set<number> } | undefined>()
    const missingNetworks = new Set<string>()
    // Benefit rows whose variant no Plan Attributes row of the year lists have no plan to go in.
    const refuseOrphan = (orphan: BenefitRow & { variant: string }) =>
      context.refuse(
        orphan.file,
        orphan.line,
        `PlanId ${orphan.variant} has no Plan Attributes row for PY${year}; the row is left out`,
      )

    for (const plan of plans) {
      const rows = (
        variantsOf.all(year, plan) as { variant: string; file: number; line: number; data: string }[]
      ).map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, string> }))
      const variants: VariantRow[] = []
      for (const row of rows) {
        if (variants.some((known) => known.variant === row.variant)) {
          context.refuse(
            row.file,
            row.line,
            `PlanId ${plan}-${row.variant} is listed again for PY${year}; the first row is kept`,
          )
          continue
        }
        variants.push(row)
      }
      const first = variants[0] as VariantRow
      const data = first.data
      const files = new Set(variants.map((variant) => variant.file))
      const state = (data.StateCode ?? '').toUpperCase()
      const issuer = data.IssuerId ?? ''

      const areaKey = `${state}/${issuer}/${data.ServiceAreaId ?? ''}`
      if (!areas.has(areaKey))
        areas.set(
          areaKey,
          serviceArea(areaOf.all(year, state, issuer, data.ServiceAreaId ?? '') as AreaRow[], state, context),
        )
      const area = areas.get(areaKey)
      if (!area)
        context.report(
          first.file,
          first.line,
          `ServiceAreaId ${data.ServiceAreaId} of issuer ${issuer} (${state}) has no Service Area rows for PY${year}; the plan is imported without a coverage area`,
        )
      for (const file of area?.files ?? []) files.add(file)

      const networkId = data.NetworkId ?? ''
      const network = networkId
        ? (networkOf.get(year, state, issuer, networkId) as { name: string; file: number } | undefined)
        : undefined
      if (network) files.add(network.file)
      else if (networkId && !missingNetworks.has(`${issuer}/${networkId}`)) {
        missingNetworks.add(`${issuer}/${networkId}`)
        context.report(
          first.file,
          first.line,
          `NetworkId ${networkId} of issuer ${issuer} (${state}) has no row in a Network file for PY${year}; its plans are imported without a network name`,
        )
      }

      const dental = /^yes$/i.test(data.DentalOnlyPlan ?? '')
      const category = dental ? 'Dental' : 'Medical'
      const benefitRows = variants.map((variant) => {
        const rows = benefits.take(`${plan}-${variant.variant}`, (orphan) => refuseOrphan(orphan))
        for (const row of rows) files.add(row.file)
        return rows
      })
      const listed = benefitRows.find((benefits) => benefits.length > 0) ?? []
      const planType = data.PlanType ?? ''
      const urls = [
        ['Summary of Benefits and Coverage', data.URLForSummaryofBenefitsCoverage],
        ['Plan brochure', data.PlanBrochure],
        ['Formulary', data.FormularyURL],
      ].filter((entry): entry is [string, string] => /^https?:\/\//i.test(entry[1] ?? ''))

      const resource: Resource = {
        resourceType: 'InsurancePlan',
        id: `${plan}-${year}`,
        meta: planMeta(
          context.release,
          year,
          [...files].sort((a, b) => a - b).map((file) => context.fileNames[file] as string),
        ),
        identifier: [
          { use: 'official', type: text('HIOS plan id'), system: SYSTEMS.cciio, value: plan },
          ...variants.map((variant) => ({
            use: 'secondary',
            type: text('HIOS plan variant id'),
            system: SYSTEMS.cciio,
            value: `${plan}-${variant.variant}`,
          })),
        ],
        status: 'active',
        type: [
          insurancePlanType(
            'qhp',
            ACA_PLAN_TYPES.has(planType) ? [planType] : [],
            [planType, data.MarketCoverage, dental ? 'dental' : undefined].filter(Boolean).join(', '),
          ),
        ],
        name: data.PlanMarketingName ?? plan,
        period: planPeriod(
          year,
          parseDate(data.PlanEffectiveDate ?? ''),
          parseDate(data.PlanExpirationDate ?? ''),
        ),
        ownedBy: {
          identifier: { system: SYSTEMS.cciio, value: issuer },
          display: data.IssuerMarketPlaceMarketingName ?? issuer,
        },
        administeredBy: {
          identifier: { system: SYSTEMS.cciio, value: issuer },
          display: data.IssuerMarketPlaceMarketingName ?? issuer,
        },
        ...(area && area.coverage.length > 0 ? { coverageArea: area.coverage } : {}),
        ...(urls.length > 0
          ? {
              contact: urls.map(([purpose, url]) => ({
                purpose: text(purpose),
                telecom: [{ system: 'url', value: url }],
              })),
            }
          : {}),
        // Plan-Net asks that a plan say it has a network: one the files do not name is said to be unnamed.
        network: [
          networkId
            ? { identifier: { system: SYSTEMS.cciio, value: networkId }, display: network?.name || networkId }
            : { display: `The provider network of plan ${plan} (not named in the CMS files)` },
        ],
        ...(listed.length > 0
          ? { coverage: [{ type: text(category), benefit: coverageBenefits(listed) }] }
          : {}),
      }
      const plans = variants.map((variant) => {
        const costs = generalCosts(variant, (message) => context.report(variant.file, variant.line, message))
        const hsa = variant.data.IsHSAEligible
        const csr = variant.data.CSRVariationType
        const extension = [
          ...(csr ? [{ url: EXTENSIONS.csrVariation, valueString: csr }] : []),
          ...(hsa ? [{ url: EXTENSIONS.hsaEligible, valueBoolean: /^yes$/i.test(hsa) }] : []),
        ]
        const level = variant.data.MetalLevel ?? ''
        return {
          ...(extension.length > 0 ? { extension } : {}),
          identifier: [{ system: SYSTEMS.cciio, value: `${plan}-${variant.variant}` }],
          type: {
            ...(level
              ? {
                  coding: [
                    {
                      system: SYSTEMS.planVariant,
                      code: `${metalCode(level)}-${variant.variant}`,
                      display: `${level}, variant ${variant.variant}`,
                    },
                  ],
                }
              : {}),
            text:
              [level, variant.data.PlanVariantMarketingName].filter(Boolean).join(': ') ||
              `${plan}-${variant.variant}`,
          },
          ...(costs.length > 0 ? { generalCost: costs } : {}),
        }
      })
      const plansJson = plans.map((entry, index) => {
        const specific = specificCostsJson(category, benefitRows[index] ?? [], cells, context)
        return specific === undefined
          ? JSON.stringify(entry)
          : jsonWithMember(entry, 'specificCost', specific)
      })
      const behind = context.emit(
        { ...resource, plan: plans },
        { file: first.file, line: first.line },
        files,
        jsonWithMember(resource, 'plan', `[${plansJson.join(',')}]`),
      )
      if (behind) await behind
    }

    // Benefit rows after the last plan's have no plan to go in either.
    benefits.rest(refuseOrphan)
  } finally {
    benefits.close()
  }
}

interface AreaRow {
  whole: number
  county: string | null
  partial: number
  zips: string
  file: number
  line: number
}

/** A service area as coverage: the whole state, or its counties (partial ones with their ZIP codes). */
function serviceArea(
  rows: readonly AreaRow[],
  state: string,
  context: BuildContext,
): { coverage: Resource[]; files: Set<number> } | undefined {
  if (rows.length === 0) return undefined
  const files = new Set(rows.map((row) => row.file))
  if (rows.some((row) => row.whole === 1)) return { coverage: [wholeStateArea(state)], files }
  const counties = new Map<string, { partial: boolean; zips: Set<string> }>()
  for (const row of rows) {
    const fips = row.county as string
    if (!context.counties.has(fips))
      context.report(
        row.file,
        row.line,
        `County ${fips} is not in the county list; it is kept by its code alone`,
      )
    const known = counties.get(fips) ?? { partial: false, zips: new Set<string>() }
    known.partial ||= row.partial === 1
    for (const zip of row.zips.split(',').filter(Boolean)) known.zips.add(zip)
    counties.set(fips, known)
  }
  return {
    files,
    coverage: [...counties].map(([fips, { partial, zips }]) =>
      countyArea(
        context.counties.get(fips) ?? { fips, name: fips, state },
        partial ? { zips: [...zips] } : undefined,
      ),
    ),
  }
}
