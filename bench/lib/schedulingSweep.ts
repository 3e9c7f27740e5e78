import type { RunningServer } from '../../src/app/server.js'
import { serverTimes } from './fhirQueries.js'
import { formatTable } from './load.js'
import { seededRandom } from './random.js'
import { FEED_START, locationOf, npiOf, SERVICE_TYPES, SHAPE, SPECIALTIES, STATES } from './slotFeed.js'

/** Queries per shape, each with values of its own: the p99 of so few is their slowest but one. */
const SAMPLES = 25
const WARMUP_SAMPLES = 3
const ENDPOINTS = ['slots', 'provider-locations', 'actors'] as const
const WORST_SHOWN = 30

/**
 * Every scheduling filter, each a query string drawn anew for every request (a query nobody asked before):
 * lists of 100 hold a few real values among others, or every real one (all specialties: every series).
 */
function filterDraws(random: () => number): Record<string, () => string> {
  const below = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]) => items[below(items.length)] as T
  const iso = (ms: number) => new Date(ms).toISOString()
  // A moment within the data's days, off the quarter hours slots start at.
  const moment = () => FEED_START + below((SHAPE.days - 5) * 24) * 3_600_000 + below(60) * 60_000 + 7_000
  const npi = () => npiOf(below(SHAPE.publishers), below(SHAPE.locationsPerPublisher), below(3))
  return {
    status: () => 'status=busy',
    publisher: () => `publisher=p${below(SHAPE.publishers)}`,
    serviceTypeCode: () => `serviceTypeCode=${pick(SERVICE_TYPES)}`,
    'serviceTypeCode (100)': () =>
      `serviceTypeCode=${Array.from({ length: 100 }, (_, at) => (at < 5 ? pick(SERVICE_TYPES) : `x${at}-${below(1e6)}`)).join(',')}`,
    npi: () => `npi=${npi()}`,
    'npi (100)': () => `npi=${Array.from({ length: 100 }, npi).join(',')}`,
    specialty: () => `specialty=${pick(SPECIALTIES)}`,
    'specialty (100, all)': () =>
      `specialty=${Array.from({ length: 100 }, (_, at) => SPECIALTIES[at] ?? `${900 + at}X`).join(',')}`,
    appointmentType: () => 'appointmentType=ROUTINE',
    acceptingPatients: () => `acceptingPatients=${pick(['newpt', 'existptonly', 'existptfam'])}`,
    'isVirtual=true': () => 'isVirtual=true',
    'isVirtual=false': () => 'isVirtual=false',
    city: () =>
      `city=${encodeURIComponent(locationOf(below(SHAPE.publishers), below(SHAPE.locationsPerPublisher)).city)}`,
    state: () => `state=${pick(STATES)}`,
    'window (6 h)': () => {
      const from = moment()
      return `startAfter=${iso(from)}&startBefore=${iso(from + 6 * 3_600_000)}`
    },
    startAfter: () => `startAfter=${iso(moment())}`,
    startBefore: () => `startBefore=${iso(moment())}`,
    includePast: () => 'includePast=true',
    'offset 5,000': () => `offset=${5_000 + below(100)}`,
  }
}

/** Names that may not be asked together: each sets a parameter the other sets (a repeat is refused). */
const CLASHES = [
  ['isVirtual=true', 'isVirtual=false'],
  ['specialty', 'specialty (100, all)'],
  ['serviceTypeCode', 'serviceTypeCode (100)'],
  ['npi', 'npi (100)'],
  ['window (6 h)', 'startAfter'],
  ['window (6 h)', 'startBefore'],
]

/**
 * Issue 13's "every query shape": each filter alone and in pairs, over the three listings, on a cold server
 * (`server` started with the answer cache off). Prints how many shapes miss the p50 and p99 goals and the
 * slowest shapes; returns every shape's figures.
 */
export async function sweepShapes(
  server: RunningServer,
  key: string,
  goals: { p50: number; p99: number },
): Promise<{ shape: string; p50: number; p99: number }[]> {
  const draws = filterDraws(seededRandom(20261128))
  const names = Object.keys(draws)
  const clash = (a: string, b: string) =>
    CLASHES.some(([x, y]) => (x === a && y === b) || (x === b && y === a))
  const shapes: string[][] = [[], ...names.map((name) => [name])]
  names.forEach((a, at) => {
    for (const b of names.slice(at + 1)) if (!clash(a, b)) shapes.push([a, b])
  })
  const pathsOf = (endpoint: string, shape: string[], count: number) =>
    Array.from(
      { length: count },
      () => `/v1/scheduling/${endpoint}?${shape.map((name) => (draws[name] as () => string)()).join('&')}`,
    )
  // One pass first, so that no shape pays for what the first search of its kind makes.
  for (const endpoint of ENDPOINTS)
    for (const shape of shapes)
      await serverTimes(server, key, pathsOf(endpoint, shape, WARMUP_SAMPLES), { requests: WARMUP_SAMPLES })
  const figures: { shape: string; p50: number; p99: number }[] = []
  for (const endpoint of ENDPOINTS)
    for (const shape of shapes) {
      const times = await serverTimes(server, key, pathsOf(endpoint, shape, SAMPLES), { requests: SAMPLES })
      figures.push({ shape: `${endpoint}: ${shape.join(' + ') || 'no filter'}`, ...times })
    }
  const missed = figures.filter(({ p50, p99 }) => p50 >= goals.p50 || p99 >= goals.p99)
  console.log(
    `\nSweep: ${figures.length} shapes (every filter alone and in pairs, ${ENDPOINTS.length} listings), ${SAMPLES} queries each with values drawn anew, cold.`,
  )
  console.log(
    `p50 >= ${goals.p50} ms: ${figures.filter(({ p50 }) => p50 >= goals.p50).length}; p99 >= ${goals.p99} ms: ${figures.filter(({ p99 }) => p99 >= goals.p99).length}; either: ${missed.length}`,
  )
  const worst = missed.toSorted((a, b) => b.p50 - a.p50).slice(0, WORST_SHOWN)
  if (worst.length > 0)
    console.log(
      formatTable(
        ['slowest shapes missing a goal', 'p50 ms', 'p99 ms'],
        worst.map(({ shape, p50, p99 }) => [shape, p50.toFixed(2), p99.toFixed(2)]),
      ),
    )
  return figures
}
