/**
 * The systems and extensions an InsurancePlan of this service is written with. Identifier systems are the
 * ones Da Vinci PDex Plan-Net's data uses (so that a plan meets the directory's InsurancePlans); codes the
 * federal files give with no published code system get one of ours, `urn:svc:fhir:CodeSystem:<name>`.
 */
export const SYSTEMS = {
  /** CCIIO-assigned ids (Plan-Net): HIOS plan and variant ids, HIOS issuer ids, network ids. */
  cciio: 'http://www.cms.gov/CCIIO',
  /** Medicare Advantage contract-plan-segment, `H1234-001-000` (Plan-Net). */
  maPlan: 'https://www.cms.gov/medicare/ma-plan-id',
  /** Medicare Advantage contract number, `H1234`. */
  maContract: 'https://www.cms.gov/medicare/ma-contract-id',
  /** Plan-Net's product types (`qhp`, `mediadv`, `mediadvhmo`): the coding Plan-Net's InsurancePlan.type binds. */
  productType: 'http://hl7.org/fhir/us/davinci-pdex-plan-net/CodeSystem/InsuranceProductTypeCS',
  program: 'urn:svc:fhir:CodeSystem:plan-program',
  planType: 'urn:svc:fhir:CodeSystem:plan-type',
  /** An ACA plan variant by metal level and variant number (`silver-04`): distinct within a plan, as Plan-Net asks. */
  planVariant: 'urn:svc:fhir:CodeSystem:plan-variant',
  costKind: 'urn:svc:fhir:CodeSystem:plan-cost',
  applicability: 'http://terminology.hl7.org/CodeSystem/applicability',
  currency: 'urn:iso:std:iso:4217',
  ucum: 'http://unitsofmeasure.org',
} as const

const extension = (name: string) => `urn:svc:fhir:StructureDefinition:${name}`

export const EXTENSIONS = {
  /** On meta: the release the plan was read from, its plan year, and one per source file. */
  release: extension('plan-release'),
  planYear: extension('plan-year'),
  sourceFile: extension('plan-source-file'),
  /** On a coverageArea reference: the plan is sold in part of the county only, in these ZIP codes. */
  partialCounty: extension('partial-county'),
  zipCode: extension('partial-county-zip-code'),
  /** On a coverageArea reference naming a state: the plan is sold in the whole state. */
  wholeState: extension('whole-state'),
  /** On a coverage benefit: whether the plan covers it (the files list benefits it does not cover too). */
  covered: extension('benefit-covered'),
  /** On a plan: its cost-sharing reduction variant, as the file words it; and whether it is HSA-eligible. */
  csrVariation: extension('csr-variation'),
  hsaEligible: extension('hsa-eligible'),
  /** On a plan: Medicare Advantage special needs plan type. */
  snpType: extension('snp-type'),
  /** On a search entry: the plan is sold in only part of the county searched. */
  partialMatch: extension('partial-county-match'),
} as const

/** The program of a release: ACA Marketplace qualified health plans, or Medicare Advantage. */
export type Program = 'qhp' | 'ma'

/** The profile every InsurancePlan of this service conforms to. */
export const PLAN_NET_INSURANCE_PLAN =
  'http://hl7.org/fhir/us/davinci-pdex-plan-net/StructureDefinition/plannet-InsurancePlan|1.2.0'

export const PROGRAM_NAMES: Record<Program, string> = {
  qhp: 'ACA Marketplace qualified health plan',
  ma: 'Medicare Advantage',
}

/** Plan types a search takes (`type`), besides the programs; matched case-insensitively. */
export const PLAN_TYPES = ['HMO', 'PPO', 'EPO', 'POS', 'PFFS', 'MSA', 'Indemnity'] as const
export type PlanType = (typeof PLAN_TYPES)[number]

/** A partition of the store: one program's plans of one plan year, replaced whole by an import. */
export const partitionKey = (program: Program, year: number) => `${program}-${year}`
