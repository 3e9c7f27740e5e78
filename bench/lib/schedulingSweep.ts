import type { RunningServer } from '../../src/app/server.js'
import { getOk, serverTimes } from './fhirQueries.js'
import { formatTable, percentile } from './load.js'
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

/** Every filter alone and in pairs (no two that set one parameter), each a name of `filterDraws`. */
function sweptShapes(names: readonly string[]): string[][] {
  const clash = (a: string, b: string) =>
    CLASHES.some(([x, y]) => (x === a && y === b) || (x === b && y === a))
  const shapes: string[][] = [[], ...names.map((name) => [name])]
  names.forEach((a, at) => {
    for (const b of names.slice(at + 1)) if (!clash(a, b)) shapes.push([a, b])
  })
  return shapes
}

/** The sweep's shapes over each listing, by label, and `count` paths of a shape with values drawn anew. */
function sweep() {
  const draws = filterDraws(seededRandom(20261128))
  const shapes = ENDPOINTS.flatMap((endpoint) =>
    sweptShapes(Object.keys(draws)).map((shape) => ({
      endpoint,
      shape,
      label: `${endpoint}: ${shape.join(' + ') || 'no filter'}`,
    })),
  )
  const pathsOf = ({ endpoint, shape }: { endpoint: string; shape: string[] }, count: number) =>
    Array.from(
      { length: count },
      () => `/v1/scheduling/${endpoint}?${shape.map((name) => (draws[name] as () => string)()).join('&')}`,
    )
  return { shapes, pathsOf }
}

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
  const { shapes, pathsOf } = sweep()
  // One pass first, so that no shape pays for what the first search of its kind makes.
  for (const shape of shapes)
    await serverTimes(server, key, pathsOf(shape, WARMUP_SAMPLES), { requests: WARMUP_SAMPLES })
  const figures: { shape: string; p50: number; p99: number }[] = []
  for (const shape of shapes) {
    const times = await serverTimes(server, key, pathsOf(shape, SAMPLES), { requests: SAMPLES })
    figures.push({ shape: shape.label, ...times })
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

/** A server of the comparison, and the organization its requests are logged under. */
export interface ComparedServer {
  label: string
  server: RunningServer
  key: string
  org: number
}

/** Queries per shape in a comparison: each sent to both servers. */
const COMPARED_SAMPLES = 40

/**
 * The sweep's shapes (those whose label holds `only`, if given) on two cold servers in one process, each
 * query sent to both in turn, the first of the two alternating: both meet the same moment of a shared,
 * noisy machine, so their ratio holds where either's figure alone moves by a fifth or more between runs.
 * Server times per organization from the one request log the two share. Prints each shape's p50s and ratio
 * (second / first), worst first, and their geometric mean.
 */
export async function compareShapes(sides: [ComparedServer, ComparedServer], only: string | undefined) {
  const { shapes, pathsOf } = sweep()
  const chosen = shapes.filter(({ label }) => only === undefined || label.includes(only))
  const [first, second] = sides
  const log = first.server.live
  type Times = { p50: number; p99: number }
  const rows: { label: string; times: [Times, Times]; ratio: number }[] = []
  for (const shape of chosen) {
    const paths = pathsOf(shape, WARMUP_SAMPLES + COMPARED_SAMPLES)
    for (const side of sides) await side.server.flush()
    const after = log.prepare('SELECT coalesce(max(rowid), 0) FROM request_log').pluck().get() as number
    for (const [nth, path] of paths.entries())
      for (const { server, key } of nth % 2 === 0 ? sides : [second, first])
        await getOk(`${server.url}${path}`, key)
    for (const side of sides) await side.server.flush()
    const times = sides.map(({ org }) => {
      const all = log
        .prepare('SELECT duration_ms FROM request_log WHERE rowid > ? AND org_id = ? ORDER BY rowid')
        .pluck()
        .all(after, org) as number[]
      const measured = all.slice(WARMUP_SAMPLES).sort((a, b) => a - b)
      return { p50: percentile(measured, 50), p99: percentile(measured, 99) }
    }) as [Times, Times]
    rows.push({ label: shape.label, times, ratio: times[1].p50 / times[0].p50 })
  }
  const geomean = Math.exp(rows.reduce((sum, { ratio }) => sum + Math.log(ratio), 0) / rows.length)
  console.log(
    `\n${rows.length} shapes, ${COMPARED_SAMPLES} queries each (values drawn anew), each sent to both servers in turn, cold.`,
  )
  console.log(
    formatTable(
      [
        'shape',
        `${first.label} p50`,
        `${second.label} p50`,
        'ratio',
        `${first.label} p99`,
        `${second.label} p99`,
      ],
      rows
        .toSorted((a, b) => b.ratio - a.ratio)
        .map(({ label, times: [a, b], ratio }) => [
          label,
          a.p50.toFixed(2),
          b.p50.toFixed(2),
          ratio.toFixed(2),
          a.p99.toFixed(1),
          b.p99.toFixed(1),
        ]),
    ),
  )
  console.log(`geometric mean of the ratios: ${geomean.toFixed(3)}`)
  return { shapes: rows, geomean }
}
