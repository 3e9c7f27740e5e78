import { CountyNames } from '../../geo/counties.js'
import { countyArea } from '../coverage.js'
import { EXTENSIONS, SYSTEMS } from '../vocabulary.js'
import type { BuildContext } from './build.js'
import { parseMoney } from './costs.js'
import { generalCost, insurancePlanType, planMeta, planPeriod, text } from './resource.js'

type Resource = Record<string, unknown>

/**
 * The Medicare Advantage plans of one contract year: one InsurancePlan per contract-plan-segment, from PBP
 * Section A (organization, plan name and type, SNP), PlanArea (the counties served) and, when given, the
 * landscape file (premiums, out-of-pocket maximum; counties when there is no PlanArea).
 */

/** PBP plan type codes (`pbp_a_plan_type`): their names, and the plan types a search finds them by. */
const PBP_PLAN_TYPES: Record<string, { name: string; types: string[] }> = {
  '01': { name: 'HMO', types: ['HMO'] },
  '02': { name: 'HMO-POS', types: ['HMO', 'POS'] },
  '04': { name: 'Local PPO', types: ['PPO'] },
  '05': { name: 'PSO (State License)', types: [] },
  '07': { name: 'MSA', types: ['MSA'] },
  '08': { name: 'RFB PFFS', types: ['PFFS'] },
  '09': { name: 'PFFS', types: ['PFFS'] },
  '18': { name: '1876 Cost', types: [] },
  '19': { name: 'HCPP - 1833 Cost', types: [] },
  '20': { name: 'National PACE', types: [] },
  '31': { name: 'Regional PPO', types: ['PPO'] },
  '42': { name: 'RFB HMO', types: ['HMO'] },
  '43': { name: 'RFB HMO-POS', types: ['HMO', 'POS'] },
  '44': { name: 'RFB Local PPO', types: ['PPO'] },
  '45': { name: 'RFB PSO (State License)', types: [] },
}

/** A landscape file's plan type in words ("HMO-POS", "Local PPO"): the plan types in it. */
const typesInWords = (words: string) =>
  ['HMO', 'PPO', 'POS', 'PFFS', 'MSA'].filter((type) => new RegExp(`\\b${type}\\b`, 'i').test(words))

interface MaPlanRow {
  file: number
  line: number
  data: Record<string, string>
}

interface MaAreaRow {
  ssa: string
  county: string
  state: string
  partial: number
  file: number
  line: number
}

interface LandscapeRow {
  state: string
  county: string
  file: number
  line: number
  data: Record<string, string>
}

const LANDSCAPE_COSTS = [
  ['Part C Premium', 'premium', 'Part C premium, monthly'],
  ['Monthly Consolidated Premium (Part C + D)', 'premium', 'Consolidated premium (Part C + D), monthly'],
  ['In-Network Maximum Out-of-Pocket (MOOP) Amount', 'moop', 'Maximum out-of-pocket, in network'],
  ['Annual Part D Deductible Amount', 'deductible', 'Part D deductible, annual'],
] as const

export async function buildMaPlans(context: BuildContext): Promise<void> {
  const { db } = context.staging
  const { year } = context
  const names = new CountyNames()
  const keys = db
    .prepare(
      `SELECT contract, plan, segment FROM ma_plan WHERE year = ?
       UNION SELECT contract, plan, segment FROM ma_landscape WHERE year = ?
       ORDER BY 1, 2, 3`,
    )
    .all(year, year) as { contract: string; plan: string; segment: string }[]
  const sectionA = db.prepare(
    'SELECT file, line, data FROM ma_plan WHERE year = ? AND contract = ? AND plan = ? AND segment = ? ORDER BY rowid',
  )
  const areaRows = db.prepare(
    'SELECT ssa, county, state, partial, file, line FROM ma_area WHERE contract = ? AND plan = ? AND segment = ? AND (year = ? OR year IS NULL) ORDER BY rowid',
  )
  const landscapeRows = db.prepare(
    'SELECT state, county, file, line, data FROM ma_landscape WHERE year = ? AND contract = ? AND plan = ? AND segment = ? ORDER BY rowid',
  )
  const parse = <T extends { data: string }>(row: T) => ({
    ...row,
    data: JSON.parse(row.data) as Record<string, string>,
  })

  for (const { contract, plan, segment } of keys) {
    const id = `${contract}-${plan}-${segment}`
    const [section, ...again] = (
      sectionA.all(year, contract, plan, segment) as (MaPlanRow & { data: string })[]
    ).map((row) => parse(row) as MaPlanRow)
    for (const row of again)
      context.refuse(row.file, row.line, `${id} is listed again for ${year}; the first row is kept`)
    const landscape = (
      landscapeRows.all(year, contract, plan, segment) as (LandscapeRow & { data: string })[]
    ).map((row) => parse(row) as LandscapeRow)
    const areas = areaRows.all(contract, plan, segment, year) as MaAreaRow[]
    const files = new Set(
      [section?.file, ...landscape.map((row) => row.file), ...areas.map((row) => row.file)].filter(
        (file): file is number => file !== undefined,
      ),
    )
    const a = section?.data ?? {}
    const l = landscape[0]?.data ?? {}

    const coverage = new Map<string, Resource>()
    const place = (
      state: string,
      county: string,
      file: number,
      line: number,
      partial: boolean,
      ssa?: string,
    ) => {
      const found = names.find(state, county)
      if (!found) {
        context.report(
          file,
          line,
          `county "${county}"${ssa ? ` (SSA code ${ssa})` : ''} of ${state} is not in the county list; it is left out of the coverage area`,
        )
        return
      }
      if (!coverage.has(found.fips))
        coverage.set(found.fips, countyArea(found, partial ? { zips: [] } : undefined))
    }
    if (areas.length > 0)
      for (const row of areas) place(row.state, row.county, row.file, row.line, row.partial === 1, row.ssa)
    else for (const row of landscape) place(row.state, row.county, row.file, row.line, false)

    const pbpType = PBP_PLAN_TYPES[a.pbp_a_plan_type ?? '']
    const words =
      pbpType?.name ??
      l['Plan Type'] ??
      (a.pbp_a_plan_type ? `PBP plan type ${a.pbp_a_plan_type}` : 'Medicare Advantage')
    const snp = a.pbp_a_special_need_flag === '1'
    const types = [...(pbpType?.types ?? typesInWords(l['Plan Type'] ?? '')), ...(snp ? ['SNP'] : [])]
    const organization =
      a.pbp_a_org_marketing_name || a.pbp_a_org_name || l['Organization Marketing Name'] || contract
    const costs = LANDSCAPE_COSTS.flatMap(([column, kind, label]) => {
      const raw = l[column]
      if (raw === undefined) return []
      const money = parseMoney(raw)
      if (money.kind === 'none') return []
      const first = landscape[0] as LandscapeRow
      if (money.kind === 'text')
        context.report(first.file, first.line, `${column} "${raw}" is not an amount; kept as text`)
      return [
        generalCost(kind, label, money.kind === 'text' ? { comment: money.text } : { dollars: money.value }),
      ]
    })
    const origin = section ?? landscape[0] ?? { file: 0, line: 0 }
    const resource: Resource = {
      resourceType: 'InsurancePlan',
      id: `${id}-${year}`,
      meta: planMeta(
        context.release,
        year,
        [...files].sort((x, y) => x - y).map((file) => context.fileNames[file] as string),
      ),
      identifier: [
        {
          use: 'official',
          type: text('Medicare Advantage contract-plan-segment id'),
          system: SYSTEMS.maPlan,
          value: id,
        },
      ],
      status: 'active',
      type: [insurancePlanType('ma', types, snp ? `${words}, special needs plan` : words)],
      name: a.pbp_a_plan_name || l['Plan Name'] || id,
      period: planPeriod(year),
      ownedBy: { identifier: { system: SYSTEMS.maContract, value: contract }, display: organization },
      administeredBy: { identifier: { system: SYSTEMS.maContract, value: contract }, display: organization },
      ...(coverage.size > 0 ? { coverageArea: [...coverage.values()] } : {}),
      ...(/^https?:\/\//i.test(a.pbp_a_org_website ?? '')
        ? {
            contact: [
              {
                purpose: text('Organization website'),
                telecom: [{ system: 'url', value: a.pbp_a_org_website }],
              },
            ],
          }
        : {}),
      // The plan files name no network; Plan-Net asks that a plan say it has one: named by what is known.
      network: [
        { display: `The provider network of Medicare Advantage plan ${id} (not named in the CMS files)` },
      ],
      plan: [
        {
          ...(snp && a.pbp_a_special_need_plan_type
            ? { extension: [{ url: EXTENSIONS.snpType, valueString: a.pbp_a_special_need_plan_type }] }
            : {}),
          identifier: [{ system: SYSTEMS.maPlan, value: id }],
          type: text(a.pbp_a_segment_name ? `${words}: ${a.pbp_a_segment_name}` : words),
          ...(costs.length > 0 ? { generalCost: costs } : {}),
        },
      ],
    }
    const behind = context.emit(resource, { file: origin.file, line: origin.line }, files)
    if (behind) await behind
  }

  for (const row of db
    .prepare(
      `SELECT a.file, a.line, a.contract, a.plan, a.segment FROM ma_area a
       WHERE a.year = ? AND NOT EXISTS (SELECT 1 FROM ma_plan p WHERE p.contract = a.contract AND p.plan = a.plan AND p.segment = a.segment AND p.year = a.year)
         AND NOT EXISTS (SELECT 1 FROM ma_landscape l WHERE l.contract = a.contract AND l.plan = a.plan AND l.segment = a.segment AND l.year = a.year)
       ORDER BY a.rowid`,
    )
    .iterate(year) as IterableIterator<{
    file: number
    line: number
    contract: string
    plan: string
    segment: string
  }>)
    context.refuse(
      row.file,
      row.line,
      `${row.contract}-${row.plan}-${row.segment} has no Section A or landscape row for ${year}; the row is left out`,
    )
}
