import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createReadStream, createWriteStream, existsSync, renameSync, type WriteStream } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { seededRandom } from './random.js'

/**
 * A deterministic national-scale SMART Scheduling Links data set, generated on request and streamed by a
 * local HTTP server (nothing touches the disk). Every count derives from the shape below, so runs compare.
 * Run as a child process (`node --import tsx bench/lib/slotFeed.ts`): it prints its URL on the first line.
 */
export const SHAPE = {
  publishers: 50,
  locationsPerPublisher: 400, // 20,000 locations
  rolesPerLocation: 3, // 60,000 provider-locations, one schedule each
  slotsPerSchedule: 33, // plus one more on every third schedule: 2,000,000 slots
  days: 30,
  slotFiles: 4,
}
export const TOTAL_SLOTS =
  SHAPE.publishers *
  SHAPE.locationsPerPublisher *
  SHAPE.rolesPerLocation *
  (SHAPE.slotsPerSchedule + 1 / SHAPE.rolesPerLocation)
/** The data set's "now": slots start from here over the next SHAPE.days. */
export const FEED_START = Date.parse('2026-10-15T12:00:00Z')

export const STATES =
  'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY'.split(
    ' ',
  )
export const SERVICE_TYPES = Array.from({ length: 20 }, (_, index) => String(100 + index))
export const SPECIALTIES = Array.from(
  { length: 30 },
  (_, index) => `20${String(index).padStart(2, '0')}00000X`,
)
const ACCEPTING = ['newpt', 'existptonly', 'existptfam', 'nopt']
const EXT = 'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/'

const pick = <T>(list: readonly T[], value: number) => list[Math.floor(value * list.length)] as T

export const npiOf = (publisher: number, location: number, role: number) =>
  String(1_000_000_000 + (publisher * SHAPE.locationsPerPublisher + location) * SHAPE.rolesPerLocation + role)

/** Each publisher serves a region: most of its locations in one state, some in the next. */
export function locationOf(publisher: number, location: number) {
  const next = seededRandom(publisher * 100_003 + location)
  const state = STATES[(publisher + (next() < 0.8 ? 0 : 1)) % STATES.length] as string
  const city = `${state} City ${Math.floor(next() * 20)}`
  return { state, city, virtual: next() < 0.05 }
}

function* locations(publisher: number, prefix: string) {
  for (let l = 0; l < SHAPE.locationsPerPublisher; l++) {
    const { state, city, virtual } = locationOf(publisher, l)
    yield {
      resourceType: 'Location',
      id: `${prefix}L${l}`,
      name: `Clinic ${publisher}-${l}`,
      telecom: [{ system: 'phone', value: `555-${String(l).padStart(4, '0')}` }],
      address: { line: [`${l} Main St`], city, state, postalCode: String(10000 + l) },
      ...(virtual
        ? {
            physicalType: {
              coding: [
                { system: 'http://terminology.hl7.org/CodeSystem/location-physical-type', code: 'vi' },
              ],
            },
          }
        : {}),
    }
  }
}

function* roles(publisher: number, prefix: string) {
  for (let l = 0; l < SHAPE.locationsPerPublisher; l++) {
    for (let r = 0; r < SHAPE.rolesPerLocation; r++) {
      const next = seededRandom(publisher * 7_919 + l * 31 + r)
      yield {
        resourceType: 'PractitionerRole',
        id: `${prefix}R${l}-${r}`,
        identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: npiOf(publisher, l, r) }],
        practitioner: { display: `Dr. Provider ${publisher}-${l}-${r}` },
        specialty: [
          { coding: [{ system: 'http://nucc.org/provider-taxonomy', code: pick(SPECIALTIES, next()) }] },
        ],
        location: [{ reference: `Location/${prefix}L${l}` }],
      }
    }
  }
}

function* schedules(publisher: number, prefix: string) {
  for (let l = 0; l < SHAPE.locationsPerPublisher; l++) {
    for (let r = 0; r < SHAPE.rolesPerLocation; r++) {
      const next = seededRandom(publisher * 104_729 + l * 17 + r)
      const codes = [pick(SERVICE_TYPES, next()), ...(next() < 0.3 ? [pick(SERVICE_TYPES, next())] : [])]
      yield {
        resourceType: 'Schedule',
        id: `${prefix}S${l}-${r}`,
        serviceType: [
          {
            coding: codes.map((code) => ({
              system: 'http://terminology.hl7.org/CodeSystem/service-type',
              code,
            })),
          },
        ],
        actor: [
          { reference: `Location/${prefix}L${l}` },
          { reference: `PractitionerRole/${prefix}R${l}-${r}` },
        ],
      }
    }
  }
}

function* slots(publisher: number, file: number, prefix: string) {
  const schedulesPerFile = (SHAPE.locationsPerPublisher * SHAPE.rolesPerLocation) / SHAPE.slotFiles
  for (let s = file * schedulesPerFile; s < (file + 1) * schedulesPerFile; s++) {
    const l = Math.floor(s / SHAPE.rolesPerLocation)
    const r = s % SHAPE.rolesPerLocation
    const next = seededRandom(publisher * 15_485_863 + s)
    const count = SHAPE.slotsPerSchedule + (r === 0 ? 1 : 0)
    const accepting = next() < 0.5 ? pick(ACCEPTING, next()) : undefined
    for (let k = 0; k < count; k++) {
      const start = FEED_START + Math.floor(next() * SHAPE.days * 96) * 900_000
      yield {
        resourceType: 'Slot',
        id: `${prefix}T${s}-${k}`,
        schedule: { reference: `Schedule/${prefix}S${l}-${r}` },
        status: next() < 0.8 ? 'free' : 'busy',
        start: new Date(start).toISOString(),
        end: new Date(start + 1_800_000).toISOString(),
        extension: [
          { url: `${EXT}booking-deep-link`, valueUrl: `https://book.example.org/${publisher}/${s}/${k}` },
          ...(accepting
            ? [
                {
                  url: `${EXT}patient-type`,
                  valueCoding: {
                    system: 'http://terminology.hl7.org/CodeSystem/accepting-patients',
                    code: accepting,
                  },
                },
              ]
            : []),
        ],
      }
    }
  }
}

const NDJSON = { 'content-type': 'application/fhir+ndjson' }

/** Generates the records as NDJSON, and keeps a copy in `keep` when given (renamed into place when whole). */
async function stream(response: ServerResponse, records: Iterable<unknown>, keep?: string) {
  response.writeHead(200, NDJSON)
  const copy: WriteStream | undefined = keep ? createWriteStream(`${keep}.partial`) : undefined
  let buffer = ''
  for (const record of records) {
    buffer += `${JSON.stringify(record)}\n`
    if (buffer.length > 64_000) {
      copy?.write(buffer)
      if (!response.write(buffer)) await once(response, 'drain')
      buffer = ''
    }
  }
  response.end(buffer)
  if (copy && keep) {
    copy.end(buffer)
    await once(copy, 'finish')
    renameSync(`${keep}.partial`, keep)
  }
}

/**
 * The manifest of the given publishers' files as one feed: all their references, then all their slots. As
 * `whole`, the files of one publisher holding them all (`/all/p<n>/…`): the same records, their ids made
 * distinct across the publishers by a `p<n>-` prefix, as one feed's ids are.
 */
function manifest(publishers: readonly number[], whole: boolean) {
  const base = (publisher: number) => `${whole ? '/all' : ''}/p${publisher}`
  const output = [
    ...publishers.flatMap((publisher) => [
      { type: 'Location', url: `${base(publisher)}/locations.ndjson` },
      { type: 'PractitionerRole', url: `${base(publisher)}/roles.ndjson` },
      { type: 'Schedule', url: `${base(publisher)}/schedules.ndjson` },
    ]),
    ...publishers.flatMap((publisher) =>
      Array.from({ length: SHAPE.slotFiles }, (_, file) => ({
        type: 'Slot',
        url: `${base(publisher)}/slots-${file}.ndjson`,
      })),
    ),
  ]
  return JSON.stringify({
    transactionTime: new Date(FEED_START).toISOString(),
    request: '$bulk-publish',
    output,
    error: [],
  })
}

/**
 * With `keepDir`, each file is generated once and then served from that copy: a run that syncs the same
 * feed again (the soak bench) then measures the appliance, not this generator, which stands in for
 * publishers' own machines and would otherwise take a core of the machine under test.
 */
async function serve(keepDir: string | undefined) {
  const server = createServer((request, response) => {
    // The first n publishers' feeds as one publisher's (a national chain's): `/all/$bulk-publish?publishers=n`.
    const all = /^\/all\/\$bulk-publish\?publishers=(\d+)$/.exec(request.url ?? '')
    if (all) {
      const count = Math.min(Number(all[1]), SHAPE.publishers)
      const publishers = Array.from({ length: count }, (_, publisher) => publisher)
      return response.writeHead(200, { 'content-type': 'application/json' }).end(manifest(publishers, true))
    }
    const match = /^\/(all\/)?p(\d+)\/(.+)$/.exec(request.url ?? '')
    const whole = match?.[1] !== undefined
    const publisher = Number(match?.[2])
    const file = match?.[3]
    const prefix = whole ? `p${publisher}-` : ''
    if (!match || publisher >= SHAPE.publishers) return response.writeHead(404).end()
    if (file === '$bulk-publish') {
      return response.writeHead(200, { 'content-type': 'application/json' }).end(manifest([publisher], false))
    }
    const slotFile = /^slots-(\d+)\.ndjson$/.exec(file ?? '')
    const records =
      file === 'locations.ndjson'
        ? locations(publisher, prefix)
        : file === 'roles.ndjson'
          ? roles(publisher, prefix)
          : file === 'schedules.ndjson'
            ? schedules(publisher, prefix)
            : slotFile
              ? slots(publisher, Number(slotFile[1]), prefix)
              : undefined
    if (!records) return response.writeHead(404).end()
    const kept = keepDir ? join(keepDir, `${whole ? 'all-' : ''}p${publisher}-${file}`) : undefined
    if (kept && existsSync(kept)) {
      response.writeHead(200, NDJSON)
      return void pipeline(createReadStream(kept, { highWaterMark: 1 << 20 }), response).catch(() =>
        response.destroy(),
      )
    }
    void stream(response, records, kept)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
}

/**
 * Asks the feed kept in a directory (`startFeedProcess(keepDir)`) for every file of the first `publishers`,
 * so that they are generated and kept before a measured sync reads them.
 */
export async function generateKeptFeed(url: string, publishers: number, asOne = false): Promise<void> {
  const manifests = asOne
    ? [`${url}/all/$bulk-publish?publishers=${publishers}`]
    : Array.from({ length: publishers }, (_, publisher) => `${url}/p${publisher}/$bulk-publish`)
  for (const address of manifests) {
    const manifest = (await (await fetch(address)).json()) as { output: { url: string }[] }
    for (const output of manifest.output) {
      const body = (await fetch(`${url}${output.url}`)).body
      if (body) for await (const _chunk of body) void _chunk
    }
  }
}

/** This feed server in a child process of its own (so that generating never takes the bench's thread). */
export function startFeedProcess(keepDir?: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const keep = keepDir ? [keepDir] : []
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...keep], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) =>
      resolve({ url: chunk.toString().trim(), pid: child.pid as number, stop: () => child.kill() }),
    )
    child.once('exit', (code) => reject(new Error(`feed server exited ${code}`)))
  })
}

if (import.meta.url === `file://${process.argv[1]}`) await serve(process.argv[2])
