import type { Program } from '../vocabulary.js'

/** The federal plan files an import reads, each recognised by its header, never by its file name. */
export type PlanFileKind =
  | 'plan-attributes'
  | 'benefits'
  | 'service-area'
  | 'network'
  | 'pbp-section-a'
  | 'pbp-plan-area'
  | 'ma-landscape'

export interface Layout {
  kind: PlanFileKind
  program: Program
  /** What a person calls the file: "ACA Plan Attributes PUF". */
  title: string
  /** Columns the mapping needs, by their header names: a file without one is refused, naming it. */
  needs: readonly string[]
  /** The column that says a row's plan year, when the file has one. */
  yearColumn?: string
}

export const LAYOUTS: readonly Layout[] = [
  {
    kind: 'plan-attributes',
    program: 'qhp',
    title: 'ACA Plan Attributes PUF',
    yearColumn: 'BusinessYear',
    needs: [
      'BusinessYear',
      'StateCode',
      'IssuerId',
      'IssuerMarketPlaceMarketingName',
      'StandardComponentId',
      'PlanMarketingName',
      'NetworkId',
      'ServiceAreaId',
      'PlanType',
      'MetalLevel',
      'PlanId',
      'CSRVariationType',
      'DentalOnlyPlan',
      'MarketCoverage',
    ],
  },
  {
    kind: 'benefits',
    program: 'qhp',
    title: 'ACA Benefits and Cost Sharing PUF',
    yearColumn: 'BusinessYear',
    needs: [
      'BusinessYear',
      'StandardComponentId',
      'PlanId',
      'BenefitName',
      'CopayInnTier1',
      'CopayInnTier2',
      'CopayOutofNet',
      'CoinsInnTier1',
      'CoinsInnTier2',
      'CoinsOutofNet',
      'IsCovered',
    ],
  },
  {
    kind: 'service-area',
    program: 'qhp',
    title: 'ACA Service Area PUF',
    yearColumn: 'BusinessYear',
    needs: [
      'BusinessYear',
      'StateCode',
      'IssuerId',
      'ServiceAreaId',
      'CoverEntireState',
      'County',
      'PartialCounty',
      'ZipCodes',
    ],
  },
  {
    kind: 'network',
    program: 'qhp',
    title: 'ACA Network PUF',
    yearColumn: 'BusinessYear',
    needs: ['BusinessYear', 'StateCode', 'IssuerId', 'NetworkId', 'NetworkName'],
  },
  {
    kind: 'pbp-section-a',
    program: 'ma',
    title: 'Medicare Advantage PBP Section A',
    needs: [
      'pbp_a_hnumber',
      'pbp_a_plan_identifier',
      'segment_id',
      'pbp_a_org_name',
      'pbp_a_plan_name',
      'pbp_a_plan_type',
    ],
  },
  {
    kind: 'pbp-plan-area',
    program: 'ma',
    title: 'Medicare Advantage PBP PlanArea',
    yearColumn: 'contract_year',
    needs: ['pbp_a_hnumber', 'pbp_a_plan_identifier', 'segment_id', 'county_code', 'county', 'stcd'],
  },
  {
    kind: 'ma-landscape',
    program: 'ma',
    title: 'Medicare Advantage landscape',
    yearColumn: 'Contract Year',
    needs: [
      'Contract Year',
      'State Territory Abbreviation',
      'County Name',
      'Contract ID',
      'Plan ID',
      'Segment ID',
      'Plan Name',
      'Plan Type',
      'Organization Marketing Name',
    ],
  },
]

/** Share of a layout's needed columns a header must hold to be taken for that file (then missing ones are named). */
const RECOGNISED_SHARE = 0.6

/** The layout whose needed columns the header holds the largest share of (at least 60%), if any. */
export function recognise(header: readonly string[]): Layout | undefined {
  const names = new Set(header)
  let best: { layout: Layout; share: number } | undefined
  for (const layout of LAYOUTS) {
    const share = layout.needs.filter((name) => names.has(name)).length / layout.needs.length
    if (share >= RECOGNISED_SHARE && (!best || share > best.share)) best = { layout, share }
  }
  return best?.layout
}
