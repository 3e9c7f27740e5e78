import type { PlanFileKind } from './layouts.js'
import { packedFields, type Staging } from './staging.js'
import type { Row } from './tables.js'

/**
 * Rows into the staging file, each checked for what the build relies on (ids of the right shape, a plan
 * year); a row that fails is refused with its reason, the others go on.
 */

/** A general cost column of the ACA Plan Attributes file: MOOP and deductibles by benefit kind, tier and scope. */
export const GENERAL_COST_COLUMN =
  /^(MEHB|DEHB|TEHB)(Ded)?(InnTier1|InnTier2|OutOfNet|CombInnOon)(Individual|FamilyPerPerson|FamilyPerGroup|Coinsurance)(MOOP)?$/

/** Plan Attributes columns read besides the needed ones and the general costs, when the file has them. */
const VARIANT_EXTRAS = [
  'PlanVariantMarketingName',
  'PlanEffectiveDate',
  'PlanExpirationDate',
  'IsHSAEligible',
  'IssuerActuarialValue',
  'URLForSummaryofBenefitsCoverage',
  'PlanBrochure',
  'FormularyURL',
]

/** A staged benefit row's fields, in this order. */
export const BENEFIT_FIELDS = [
  'BenefitName',
  'CopayInnTier1',
  'CopayInnTier2',
  'CopayOutofNet',
  'CoinsInnTier1',
  'CoinsInnTier2',
  'CoinsOutofNet',
  'IsCovered',
  'QuantLimitOnSvc',
  'LimitQty',
  'LimitUnit',
  'Exclusions',
  'Explanation',
] as const

/** Section A columns read besides the needed ones, when the file has them. */
const SECTION_A_EXTRAS = [
  'pbp_a_org_marketing_name',
  'pbp_a_org_website',
  'pbp_a_special_need_flag',
  'pbp_a_special_need_plan_type',
  'pbp_a_segment_name',
  'pbp_a_eghp_yn',
]

/** Landscape columns kept for the build. */
const LANDSCAPE_FIELDS = [
  'Plan Name',
  'Plan Type',
  'Organization Marketing Name',
  'Parent Organization Name',
  'Contract Name',
  'Part C Premium',
  'Monthly Consolidated Premium (Part C + D)',
  'In-Network Maximum Out-of-Pocket (MOOP) Amount',
  'Annual Part D Deductible Amount',
]

const PLAN_ID = /^(\d{5}[A-Z]{2}\d{7})-(\d{2})$/
const STANDARD_COMPONENT_ID = /^\d{5}[A-Z]{2}\d{7}$/
const YEAR = /^(19|20)\d{2}$/
const CONTRACT = /^[A-Z]\d{4}$/

/** A county FIPS code as the files hold it; one that lost its leading zero to a spreadsheet is given it back. */
const fips = (value: string) => (/^\d{4}$/.test(value) ? `0${value}` : value)

/** A segment or plan number written unpadded (`0`, `68`) or padded (`000`, `068`). */
const padded = (value: string, width: number) =>
  /^\d+$/.test(value) ? value.padStart(width, '0') : undefined

const yes = (value: string) => /^(yes|y|1|true)$/i.test(value)

export interface StageContext {
  staging: Staging
  file: number
  columns: readonly string[]
  /** The contract year its path names (`pbp-2027`), for PBP files that carry none of their own. */
  pathYear?: number
  refuse(line: number, message: string): void
}

export type Stager = (row: Row, line: number) => void

/** The row's non-empty cells of `columns` as a JSON object, staged for the plan builder. */
function filledCells(row: Row, columns: readonly string[]): string {
  const cells: Record<string, string> = {}
  for (const column of columns) {
    const value = row(column)
    if (value !== '') cells[column] = value
  }
  return JSON.stringify(cells)
}

function yearOf(row: Row, column: string, context: StageContext, line: number): number | undefined {
  const value = row(column)
  if (YEAR.test(value)) return Number(value)
  context.refuse(line, `${column} "${value}" is not a year`)
  return undefined
}

export function stager(kind: PlanFileKind, context: StageContext): Stager {
  const { db } = context.staging
  switch (kind) {
    case 'plan-attributes': {
      const insert = db.prepare(
        'INSERT INTO variant (year, plan, variant, file, line, data) VALUES (?, ?, ?, ?, ?, ?)',
      )
      const read = [
        'StateCode',
        'IssuerId',
        'IssuerMarketPlaceMarketingName',
        'PlanMarketingName',
        'NetworkId',
        'ServiceAreaId',
        'PlanType',
        'MetalLevel',
        'CSRVariationType',
        'DentalOnlyPlan',
        'MarketCoverage',
        ...VARIANT_EXTRAS,
        ...context.columns.filter((column) => GENERAL_COST_COLUMN.test(column)),
      ]
      return (row, line) => {
        const year = yearOf(row, 'BusinessYear', context, line)
        if (year === undefined) return
        const planId = PLAN_ID.exec(row('PlanId'))
        const standard = row('StandardComponentId')
        if (!planId || !STANDARD_COMPONENT_ID.test(standard) || planId[1] !== standard) {
          context.refuse(
            line,
            `PlanId "${row('PlanId')}" is not StandardComponentId "${standard}" (5 digits, 2 letters, 7 digits) and a -NN variant`,
          )
          return
        }
        insert.run(year, standard, planId[2], context.file, line, filledCells(row, read))
      }
    }
    case 'benefits': {
      const insert = db.prepare('INSERT INTO benefit VALUES (?, ?, ?, ?, ?)')
      return (row, line) => {
        const year = yearOf(row, 'BusinessYear', context, line)
        if (year === undefined) return
        const variant = row('PlanId')
        if (!PLAN_ID.test(variant)) {
          context.refuse(line, `PlanId "${variant}" is not a plan variant id (14 characters and -NN)`)
          return
        }
        if (row('BenefitName') === '') {
          context.refuse(line, 'BenefitName is blank')
          return
        }
        const fields = packedFields(BENEFIT_FIELDS.map((column) => row(column)))
        if (fields === undefined) {
          context.refuse(line, 'a field holds a NUL character, which no text of a plan file has')
          return
        }
        insert.run(year, variant, context.file, line, fields)
      }
    }
    case 'service-area': {
      const insert = db.prepare(
        'INSERT INTO area (year, state, issuer, area, whole, county, partial, zips, file, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      return (row, line) => {
        const year = yearOf(row, 'BusinessYear', context, line)
        if (year === undefined) return
        const whole = yes(row('CoverEntireState'))
        const county = fips(row('County'))
        if (!whole && !/^\d{5}$/.test(county)) {
          context.refuse(
            line,
            `County "${row('County')}" is not a five-digit FIPS code, and the area is not a whole state`,
          )
          return
        }
        const zips = row('ZipCodes')
          .split(/[\s,;]+/)
          .filter((zip) => /^\d{5}$/.test(zip))
        insert.run(
          year,
          row('StateCode').toUpperCase(),
          row('IssuerId'),
          row('ServiceAreaId'),
          whole ? 1 : 0,
          whole ? null : county,
          yes(row('PartialCounty')) ? 1 : 0,
          zips.join(','),
          context.file,
          line,
        )
      }
    }
    case 'network': {
      const insert = db.prepare(
        'INSERT INTO network (year, state, issuer, network, name, url, file, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      return (row, line) => {
        const year = yearOf(row, 'BusinessYear', context, line)
        if (year === undefined) return
        if (row('NetworkId') === '') {
          context.refuse(line, 'NetworkId is blank')
          return
        }
        insert.run(
          year,
          row('StateCode').toUpperCase(),
          row('IssuerId'),
          row('NetworkId'),
          row('NetworkName'),
          row('NetworkURL'),
          context.file,
          line,
        )
      }
    }
    case 'pbp-section-a': {
      const insert = db.prepare(
        'INSERT INTO ma_plan (year, contract, plan, segment, file, line, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      const read = ['pbp_a_org_name', 'pbp_a_plan_name', 'pbp_a_plan_type', ...SECTION_A_EXTRAS]
      return (row, line) => {
        const key = maKey(row, 'pbp_a_hnumber', 'pbp_a_plan_identifier', 'segment_id', context, line)
        if (!key) return
        insert.run(context.pathYear ?? null, ...key, context.file, line, filledCells(row, read))
      }
    }
    case 'pbp-plan-area': {
      const insert = db.prepare(
        'INSERT INTO ma_area (year, contract, plan, segment, ssa, county, state, partial, file, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      return (row, line) => {
        const key = maKey(row, 'pbp_a_hnumber', 'pbp_a_plan_identifier', 'segment_id', context, line)
        if (!key) return
        const year = row('contract_year')
        const state = row('stcd').toUpperCase()
        if (!/^[A-Z]{2}$/.test(state) || row('county') === '') {
          context.refuse(line, `county "${row('county')}" of state "${row('stcd')}" cannot name a county`)
          return
        }
        insert.run(
          YEAR.test(year) ? Number(year) : (context.pathYear ?? null),
          ...key,
          row('county_code'),
          row('county'),
          state,
          yes(row('partial_flag')) ? 1 : 0,
          context.file,
          line,
        )
      }
    }
    case 'ma-landscape': {
      const insert = db.prepare(
        'INSERT INTO ma_landscape (year, contract, plan, segment, state, county, file, line, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      return (row, line) => {
        const year = yearOf(row, 'Contract Year', context, line)
        if (year === undefined) return
        const key = maKey(row, 'Contract ID', 'Plan ID', 'Segment ID', context, line)
        if (!key) return
        insert.run(
          year,
          ...key,
          row('State Territory Abbreviation').toUpperCase(),
          row('County Name'),
          context.file,
          line,
          filledCells(row, LANDSCAPE_FIELDS),
        )
      }
    }
  }
}

/** A Medicare Advantage plan's key: contract `H1234`, plan `001`, segment `000`. */
function maKey(
  row: Row,
  contractColumn: string,
  planColumn: string,
  segmentColumn: string,
  context: StageContext,
  line: number,
): [string, string, string] | undefined {
  const contract = row(contractColumn).toUpperCase()
  const plan = padded(row(planColumn), 3)
  const segment = padded(row(segmentColumn) || '0', 3)
  if (!CONTRACT.test(contract) || !plan || plan.length !== 3 || !segment || segment.length !== 3) {
    context.refuse(
      line,
      `${contractColumn}/${planColumn}/${segmentColumn} "${row(contractColumn)}"/"${row(planColumn)}"/"${row(segmentColumn)}" is not a contract (a letter and 4 digits), a plan and a segment number`,
    )
    return undefined
  }
  return [contract, plan, segment]
}
