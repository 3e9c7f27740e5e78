import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type County, usCounties } from '../../src/geo/counties.js'
import { seededRandom } from './random.js'

/**
 * Writes a national-scale set of federal plan files in the real layouts, from the real excerpts' headers and
 * rows (test/fixtures/plans): ACA Plan Attributes (one row per variant, every column of a real row), Benefits
 * and Cost Sharing (80 benefits a variant, every documented cost form, rows of different plans interleaved
 * as a file in no useful order would have them), Service Area (whole states, county lists, partial counties
 * with ZIP codes, over every county), Network; Medicare Advantage PBP Section A and PlanArea (Windows-1252,
 * CRLF, county names as PlanArea writes them). Run in a process of its own: `node writePlanFiles.ts <dir>
 * <variants> <maPlans>`; prints what it wrote as JSON.
 */

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/plans/', import.meta.url))
const random = seededRandom(14)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1))

class CsvFile {
  readonly #fd: number
  #buffer = ''
  rows = 0

  constructor(
    path: string,
    header: string,
    readonly separator = ',',
    readonly end = '\r\n',
  ) {
    this.#fd = openSync(path, 'w')
    this.#buffer = header + end
  }

  row(fields: readonly string[]): void {
    this.#buffer +=
      fields
        .map((field) =>
          this.separator === ',' && /[",]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field,
        )
        .join(this.separator) + this.end
    this.rows++
    if (this.#buffer.length > 1 << 20) this.flush()
  }

  flush(encoding: BufferEncoding = 'utf8'): void {
    writeSync(this.#fd, Buffer.from(this.#buffer, this.separator === '\t' ? 'latin1' : encoding))
    this.#buffer = ''
  }

  close(): void {
    this.flush()
    closeSync(this.#fd)
  }
}

const BENEFITS = [
  'Primary Care Visit to Treat an Injury or Illness',
  'Specialist Visit',
  'Other Practitioner Office Visit (Nurse, Physician Assistant)',
  'Outpatient Facility Fee (e.g., Ambulatory Surgery Center)',
  'Outpatient Surgery Physician/Surgical Services',
  'Hospice Services',
  'Routine Dental Services (Adult)',
  'Infertility Treatment',
  'Long-Term/Custodial Nursing Home Care',
  'Private-Duty Nursing',
  'Routine Eye Exam (Adult)',
  'Urgent Care Centers or Facilities',
  'Home Health Care Services',
  'Emergency Room Services',
  'Emergency Transportation/Ambulance',
  'Inpatient Hospital Services (e.g., Hospital Stay)',
  'Inpatient Physician and Surgical Services',
  'Bariatric Surgery',
  'Cosmetic Surgery',
  'Skilled Nursing Facility',
  'Prenatal and Postnatal Care',
  'Delivery and All Inpatient Services for Maternity Care',
  'Mental/Behavioral Health Outpatient Services',
  'Mental/Behavioral Health Inpatient Services',
  'Substance Abuse Disorder Outpatient Services',
  'Substance Abuse Disorder Inpatient Services',
  'Generic Drugs',
  'Preferred Brand Drugs',
  'Non-Preferred Brand Drugs',
  'Specialty Drugs',
  'Outpatient Rehabilitation Services',
  'Habilitation Services',
  'Chiropractic Care',
  'Durable Medical Equipment',
  'Hearing Aids',
  'Imaging (CT/PET Scans, MRIs)',
  'Preventive Care/Screening/Immunization',
  'Routine Foot Care',
  'Acupuncture',
  'Weight Loss Programs',
  'Routine Eye Exam for Children',
  'Eye Glasses for Children',
  'Dental Check-Up for Children',
  'Rehabilitative Speech Therapy',
  'Rehabilitative Occupational and Rehabilitative Physical Therapy',
  'Well Baby Visits and Care',
  'Laboratory Outpatient and Professional Services',
  'X-rays and Diagnostic Imaging',
  'Basic Dental Care - Child',
  'Orthodontia - Child',
  'Major Dental Care - Child',
  'Basic Dental Care - Adult',
  'Orthodontia - Adult',
  'Major Dental Care - Adult',
  'Abortion for Which Public Funding is Prohibited',
  'Transplant',
  'Accidental Dental',
  'Dialysis',
  'Allergy Testing',
  'Chemotherapy',
  'Radiation',
  'Diabetes Education',
  'Prosthetic Devices',
  'Infusion Therapy',
  'Treatment for Temporomandibular Joint Disorders',
  'Nutritional Counseling',
  'Reconstructive Surgery',
  'Clinical Trials',
  'Diabetes Care Management',
  'Inherited Metabolic Disorder - PKU',
  'Off Label Prescription Drugs',
  'Osteoporosis Treatment',
  'Hearing Aid Testing',
  'Sterilization',
  'Telehealth',
  'Applied Behavior Analysis',
  'Wigs',
  'Smoking Cessation',
  'Mammography',
  'Colonoscopy',
]

/**
 * A covered benefit's tier-1 cells as the PUFs pair them: an amount one side, "No Charge" (or 0%) the other;
 * or a percent after the deductible with no copay; or nothing to pay at all.
 */
const TIER_ONE: readonly (readonly [copay: string, coinsurance: string])[] = [
  ['$30.00', 'No Charge'],
  ['$60.00 Copay after deductible', 'No Charge'],
  ['$15.00 Copay before deductible', '0.00%'],
  ['No Charge', '20.00% Coinsurance after deductible'],
  ['No Charge after deductible', '30.00% Coinsurance after deductible'],
  ['$950.00 Copay per Stay with deductible', 'No Charge'],
  ['$3000.00 Copay per Day', '35.00%'],
  ['$500.00 Copay per Stay after deductible', '20.00%'],
  ['$1,250.00', 'No Charge'],
  ['$2000.00 Copay with deductible', 'No Charge'],
  ['No Charge', 'No Charge'],
  ['No Charge after deductible', 'No Charge after deductible'],
]
const OUT_OF_NETWORK = [
  '50.00% Coinsurance after deductible',
  '40.00%',
  '100.00%',
  'No Charge after deductible',
]

function header(path: string): string {
  return readFileSync(path, 'latin1')
    .replace(/^\uFEFF|^ï»¿/, '')
    .split(/\r?\n/)[0] as string
}

/** A real row of a CSV excerpt, split into fields (quoted fields may hold commas). */
function firstRow(path: string): string[] {
  const line = readFileSync(path, 'utf8').split(/\r?\n/)[5] as string
  return [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)]
    .map((match) => (match[1] as string).replace(/^"|"$/g, ''))
    .slice(0, -1)
}

const money = () => `$${between(0, 9_200).toLocaleString('en-US')}`

export function writePlanFiles(dir: string, variantsWanted: number, maPlans: number) {
  const counties = usCounties().filter((county) => county.state !== 'UM')
  const byState = new Map<string, County[]>()
  for (const county of counties) byState.set(county.state, [...(byState.get(county.state) ?? []), county])
  const states = [...byState.keys()]

  // Issuers, their service areas and networks.
  const attributesHeader = header(join(FIXTURES, 'aca/plan-attributes.csv'))
  const columns = attributesHeader.split(',')
  const template = firstRow(join(FIXTURES, 'aca/plan-attributes.csv'))
  const at = (name: string) => columns.indexOf(name)
  const area = new CsvFile(join(dir, 'service-area-puf.csv'), header(join(FIXTURES, 'aca/service-area.csv')))
  const network = new CsvFile(join(dir, 'network-puf.csv'), header(join(FIXTURES, 'aca/network.csv')))
  const attributes = new CsvFile(join(dir, 'plan-attributes-puf.csv'), attributesHeader)
  const benefitHeader =
    'BusinessYear,StateCode,IssuerId,SourceName,ImportDate,StandardComponentId,PlanId,BenefitName,CopayInnTier1,CopayInnTier2,CopayOutofNet,CoinsInnTier1,CoinsInnTier2,CoinsOutofNet,IsEHB,IsCovered,QuantLimitOnSvc,LimitQty,LimitUnit,Exclusions,Explanation,EHBVarReason,IsExclFromInnMOOP,IsExclFromOonMOOP'
  const benefits = new CsvFile(join(dir, 'benefits-and-cost-sharing-puf.csv'), benefitHeader)
  // Rows of several plans interleaved: a file sorted by plan would flatter the staging.
  let pending: string[][] = []
  const flushBenefits = () => {
    for (let i = pending.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[pending[i], pending[j]] = [pending[j] as string[], pending[i] as string[]]
    }
    for (const row of pending) benefits.row(row)
    pending = []
  }
  let variants = 0
  let plans = 0
  for (let issuerIndex = 0; variants < variantsWanted; issuerIndex++) {
    const state = states[issuerIndex % states.length] as string
    const issuer = String(10_000 + issuerIndex * 7)
    const stateCounties = byState.get(state) as County[]
    for (let areaIndex = 1; areaIndex <= 3; areaIndex++) {
      const areaId = `${state}S${String(areaIndex).padStart(3, '0')}`
      if (random() < 0.1)
        area.row([
          '2025',
          state,
          issuer,
          'HIOS',
          '2024-08-29 01:02:15',
          areaId,
          `${state} area ${areaIndex}`,
          'Yes',
          '',
          '',
          '',
          '',
          'Individual',
          'No',
        ])
      else {
        const start = between(0, stateCounties.length - 1)
        const count = Math.min(stateCounties.length, between(3, 60))
        for (let i = 0; i < count; i++) {
          const county = stateCounties[(start + i) % stateCounties.length] as County
          const partial = random() < 0.05
          const zips = partial
            ? Array.from({ length: between(1, 4) }, () => String(between(10_000, 99_999))).join(', ')
            : ''
          area.row([
            '2025',
            state,
            issuer,
            'HIOS',
            '2024-08-29 01:02:15',
            areaId,
            `${state} area ${areaIndex}`,
            'No',
            county.fips,
            partial ? 'Yes' : 'No',
            zips,
            partial ? 'Network adequacy' : '',
            'Individual',
            'No',
          ])
        }
      }
    }
    for (let networkIndex = 1; networkIndex <= 2; networkIndex++)
      network.row([
        '2025',
        state,
        issuer,
        'HIOS',
        '2024-08-29 01:02:15',
        `Network ${networkIndex} of ${issuer}`,
        `${state}N${String(networkIndex).padStart(3, '0')}`,
        `https://issuer${issuer}.example.org/network`,
        'Individual',
        'No',
      ])
    for (let planIndex = 1; planIndex <= 25 && variants < variantsWanted; planIndex++) {
      plans++
      const standard = `${issuer}${state}${String(planIndex * 13).padStart(7, '0')}`
      const metal = pick(['Bronze', 'Expanded Bronze', 'Silver', 'Gold', 'Platinum', 'Catastrophic'])
      const variantIds = metal === 'Silver' ? ['00', '01', '02', '03', '04', '05', '06'] : ['00', '01']
      const planType = pick(['HMO', 'HMO', 'PPO', 'EPO', 'EPO', 'POS'])
      // As in the PUFs: a second in-network tier on some plans only; out-of-network care on PPOs and POS plans.
      const tiers = random() < 0.15
      const outOfNetworkCare = planType === 'PPO' || planType === 'POS'
      const name = `${pick(['Blue', 'Summit', 'River', 'Liberty', 'Harbor', 'Prairie', 'Cascade'])} ${metal} ${planType} ${planIndex}`
      // A plan's benefits, as its base variants (-00 off, -01 on the exchange) have them; the cost-sharing
      // reduction variants (-02 to -06) lower the costs of some.
      const base = BENEFITS.map((benefit) => {
        const covered = random() < 0.75
        return {
          benefit,
          covered,
          tierOne: covered ? pick(TIER_ONE) : (['Not Applicable', 'Not Applicable'] as const),
          tierTwo: covered && tiers ? pick(TIER_ONE) : (['Not Applicable', 'Not Applicable'] as const),
          outOfNetwork: covered && outOfNetworkCare ? pick(OUT_OF_NETWORK) : 'Not Applicable',
        }
      })
      for (const variant of variantIds) {
        variants++
        const row = [...template]
        row[at('StateCode')] = state
        row[at('IssuerId')] = issuer
        row[at('IssuerMarketPlaceMarketingName')] = `Issuer ${issuer} Health`
        row[at('StandardComponentId')] = standard
        row[at('PlanMarketingName')] = name
        row[at('NetworkId')] = `${state}N00${between(1, 2)}`
        row[at('ServiceAreaId')] = `${state}S00${between(1, 3)}`
        row[at('PlanType')] = planType
        row[at('MetalLevel')] = metal
        row[at('PlanId')] = `${standard}-${variant}`
        row[at('DentalOnlyPlan')] = 'No'
        for (const [index, column] of columns.entries())
          if (/(MOOP|Ded(InnTier1|OutOfNet|CombInnOon)(Individual|FamilyPer(Person|Group)))$/.test(column))
            row[index] =
              random() < 0.3
                ? 'Not Applicable'
                : column.includes('FamilyPerGroup')
                  ? `${money()} per group`
                  : column.includes('FamilyPerPerson')
                    ? `${money()} per person`
                    : money()
        attributes.row(row)
        for (const { benefit, covered, tierOne, tierTwo: secondTier, outOfNetwork } of base) {
          const reduced = covered && variant > '01' && random() < 0.3
          const [copay, coinsurance] = reduced ? pick(TIER_ONE) : tierOne
          pending.push([
            '2025',
            state,
            issuer,
            'HIOS',
            '2024-08-29 01:02:15',
            standard,
            `${standard}-${variant}`,
            benefit,
            copay,
            secondTier[0],
            'Not Applicable',
            coinsurance,
            secondTier[1],
            outOfNetwork,
            'Yes',
            covered ? 'Covered' : pick(['Not Covered', '']),
            covered && random() < 0.1 ? 'Yes' : 'No',
            covered && random() < 0.1 ? String(between(1, 30)) : '',
            covered ? 'Visit(s) per Year' : '',
            random() < 0.05 ? 'Limited to one per year' : '',
            '',
            '',
            'No',
            'No',
          ])
        }
      }
      if (pending.length > 40_000) flushBenefits()
    }
  }
  flushBenefits()
  for (const file of [area, network, attributes, benefits]) file.close()

  // Medicare Advantage: Section A and PlanArea, Windows-1252, tab-delimited, CRLF.
  const sectionHeader = header(join(FIXTURES, 'ma/pbp-2027/pbp_Section_A.txt'))
  const sectionColumns = sectionHeader.split('\t')
  const planAreaHeader = header(join(FIXTURES, 'ma/pbp-2027/PlanArea.txt'))
  const planAreaColumns = planAreaHeader.split('\t')
  const section = new CsvFile(join(dir, 'pbp_Section_A.txt'), sectionHeader, '\t')
  const planArea = new CsvFile(join(dir, 'PlanArea.txt'), planAreaHeader, '\t')
  const fill = (names: readonly string[], values: Record<string, string>) =>
    names.map((name) => values[name] ?? '')
  const contracts = [['H1234', ['001', '002']] as const]
  for (let index = 0; contracts.length * 10 < maPlans; index++)
    contracts.push([
      `H${String(2000 + index)}`,
      Array.from({ length: 10 }, (_, plan) => String(plan + 1).padStart(3, '0')),
    ] as never)
  let maWritten = 0
  for (const [contract, planIds] of contracts) {
    const state = pick(states)
    for (const plan of planIds) {
      if (maWritten >= maPlans) break
      maWritten++
      const segment = contract === 'H1234' ? '1' : '0'
      const type = pick(['01', '02', '04', '31', '09', '07'])
      section.row(
        fill(sectionColumns, {
          pbp_a_hnumber: contract,
          pbp_a_plan_identifier: plan,
          segment_id: segment,
          pbp_a_plan_type: type,
          pbp_a_org_name: `${contract} HEALTH PLANS`,
          pbp_a_org_marketing_name: `${contract} Health`,
          pbp_a_plan_name: `${contract} Medicare Advantage ${plan} (${type})`,
          pbp_a_special_need_flag: random() < 0.1 ? '1' : '2',
        }),
      )
      const stateCounties = byState.get(state) as County[]
      const start = between(0, stateCounties.length - 1)
      for (let i = 0; i < Math.min(stateCounties.length, between(3, 40)); i++) {
        const county = stateCounties[(start + i) % stateCounties.length] as County
        planArea.row(
          fill(planAreaColumns, {
            pbp_a_hnumber: contract,
            pbp_a_plan_identifier: plan,
            segment_id: segment,
            pbp_a_plan_type: type,
            contract_id: contract,
            plan_id: plan,
            county_code: String(between(10_000, 99_999)),
            contract_year: '2027',
            county: county.name.replace(/ (County|Parish|Borough|Census Area|Municipality)$/, ''),
            stcd: county.state,
          }),
        )
      }
    }
  }
  section.close()
  planArea.close()
  return {
    variants,
    plans,
    benefitRows: benefits.rows,
    serviceAreaRows: area.rows,
    networkRows: network.rows,
    maPlans: section.rows,
    planAreaRows: planArea.rows,
    rows: attributes.rows + benefits.rows + area.rows + network.rows + section.rows + planArea.rows,
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [dir, variants, maPlans] = process.argv.slice(2)
  console.log(JSON.stringify(writePlanFiles(dir as string, Number(variants), Number(maPlans))))
}
