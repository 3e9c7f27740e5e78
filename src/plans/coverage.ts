import {
  type County,
  FIPS_COUNTY_SYSTEM,
  STATE_NAMES,
  USPS_STATE_SYSTEM,
  usCounties,
} from '../geo/counties.js'
import { EXTENSIONS } from './vocabulary.js'

type Resource = Record<string, unknown>

/**
 * Where a plan is sold, as its `coverageArea` says it: one Reference per county (identifier: the five-digit
 * FIPS code; display "County, ST"), marked when the plan covers part of it only (with its ZIP codes when
 * the file names them), or one per whole state (identifier: the USPS code). The search index and the
 * `county` marks read it back from here.
 */

export function countyArea(county: County, partial?: { zips: readonly string[] }): Resource {
  return {
    ...(partial
      ? {
          extension: [
            { url: EXTENSIONS.partialCounty, valueBoolean: true },
            ...partial.zips.map((zip) => ({ url: EXTENSIONS.zipCode, valueString: zip })),
          ],
        }
      : {}),
    identifier: { system: FIPS_COUNTY_SYSTEM, value: county.fips },
    display: `${county.name}, ${county.state}`,
  }
}

export function wholeStateArea(state: string): Resource {
  return {
    extension: [{ url: EXTENSIONS.wholeState, valueBoolean: true }],
    identifier: { system: USPS_STATE_SYSTEM, value: state },
    display: `${STATE_NAMES[state] ?? state} (whole state)`,
  }
}

let countiesByState: Map<string, string[]> | undefined
let stateOfCounty: Map<string, string> | undefined

function countyMaps() {
  if (!countiesByState || !stateOfCounty) {
    countiesByState = new Map()
    stateOfCounty = new Map()
    for (const county of usCounties()) {
      countiesByState.set(county.state, [...(countiesByState.get(county.state) ?? []), county.fips])
      stateOfCounty.set(county.fips, county.state)
    }
  }
  return { countiesByState, stateOfCounty }
}

/** A county's place in a plan's coverage: sold there whole, or in part (in the ZIP codes listed, if any). */
export interface CountyCoverage {
  partial: boolean
  zips: string[]
}

export interface Coverage {
  states: Set<string>
  /** Counties named one by one, by FIPS code. */
  counties: Map<string, CountyCoverage>
  wholeStates: string[]
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

const COVERAGE_AREA = Buffer.from('"coverageArea":')
/** The members our plans write next after `coverageArea` (import/aca.ts, import/ma.ts). */
const NEXT_MEMBERS = [Buffer.from(',"contact":'), Buffer.from(',"network":')]

/**
 * The `coverageArea` of a stored plan, parsed alone, so that a search's marks read a kilobyte of a plan
 * that may weigh hundreds: its bytes run from its key to the member our plans write next, found and parsed
 * natively; when that does not parse, to where its bracket depth closes (strings skipped), found byte by
 * byte at a tenth of the speed.
 */
export function storedCoverage(bytes: Buffer): Coverage {
  const key = bytes.indexOf(COVERAGE_AREA)
  if (key === -1) return coverageOf({})
  const start = key + COVERAGE_AREA.length
  const ends = NEXT_MEMBERS.map((member) => bytes.indexOf(member, start)).filter((end) => end !== -1)
  if (ends.length > 0) {
    try {
      return coverageOf({ coverageArea: JSON.parse(bytes.toString('utf8', start, Math.min(...ends))) })
    } catch {
      // Not where our plans put it: found by depth below.
    }
  }
  let depth = 0
  let inString = false
  for (let at = start; at < bytes.length; at++) {
    const byte = bytes[at]
    if (inString) {
      if (byte === 0x5c) at++
      else if (byte === 0x22) inString = false
    } else if (byte === 0x22) inString = true
    else if (byte === 0x5b || byte === 0x7b) depth++
    else if ((byte === 0x5d || byte === 0x7d) && --depth === 0)
      return coverageOf({ coverageArea: JSON.parse(bytes.toString('utf8', start, at + 1)) })
  }
  return coverageOf({})
}

/** A plan's coverage, read from its `coverageArea`. */
export function coverageOf(resource: Resource): Coverage {
  const coverage: Coverage = { states: new Set(), counties: new Map(), wholeStates: [] }
  const { stateOfCounty } = countyMaps()
  for (const area of asArray(resource.coverageArea)) {
    const { identifier, extension } = (area ?? {}) as {
      identifier?: { system?: unknown; value?: unknown }
      extension?: unknown
    }
    const value = typeof identifier?.value === 'string' ? identifier.value : undefined
    if (value === undefined) continue
    if (identifier?.system === USPS_STATE_SYSTEM) {
      coverage.wholeStates.push(value)
      coverage.states.add(value)
    } else if (identifier?.system === FIPS_COUNTY_SYSTEM) {
      const extensions = asArray(extension) as {
        url?: unknown
        valueBoolean?: unknown
        valueString?: unknown
      }[]
      coverage.counties.set(value, {
        partial: extensions.some(
          (item) => item.url === EXTENSIONS.partialCounty && item.valueBoolean === true,
        ),
        zips: extensions.flatMap((item) =>
          item.url === EXTENSIONS.zipCode && typeof item.valueString === 'string' ? [item.valueString] : [],
        ),
      })
      const state = stateOfCounty.get(value)
      if (state) coverage.states.add(state)
    }
  }
  return coverage
}

/** Every county a plan is sold in (wholly or in part): those it names, and every county of a whole state. */
export function countiesCovered(coverage: Coverage): Set<string> {
  const { countiesByState } = countyMaps()
  const all = new Set(coverage.counties.keys())
  for (const state of coverage.wholeStates) for (const fips of countiesByState.get(state) ?? []) all.add(fips)
  return all
}
