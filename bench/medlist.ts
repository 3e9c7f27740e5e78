import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { openDatabase } from '../src/app/store.js'
import { packageRoot } from '../src/packageRoot.js'
import { peakRssMb, runCliJson, startServeProcess } from '../test/support/cli.js'
import { unlimitedBenchKey } from './lib/fhirQueries.js'
import { formatTable, percentile, verdict } from './lib/load.js'
import { type BenchDrug, writeBenchRxNorm } from './lib/rxnormRelease.js'

/**
 * `npm run bench -- medlist [--entries 50000] [--samples 50]`: `$reconcile-medications` against a real
 * `svc serve` process. Inputs follow the fixtures' patterns (Synthea orders of one patient, repeated with
 * dispenses, statements and administrations of the same drugs, a share coded only by NDC or by text, a
 * share not taken, a share ordered by brand or dispensed by NDC alone and matched through an RxNorm release
 * generated around the fixtures' drugs): one Bundle of 50,000 entries (time, and the server's peak RSS), and 200-record
 * patients, each different (p50, p99). Times are the server's, from its request log.
 */

type Resource = Record<string, unknown>

const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm'

type Concept = { coding: { system: string; code: string; display?: string }[]; text: string }

/** A concept without its codings' displays (the text says the same). */
const compact = (concept: Concept): Concept => ({
  coding: concept.coding.map(({ system, code }) => ({ system, code })),
  text: concept.text,
})

const NDC = 'http://hl7.org/fhir/sid/ndc'
/** 11 digits as 5-4-2, the way a pharmacy system writes an NDC. */
const dashed = (ndc: string) => `${ndc.slice(0, 5)}-${ndc.slice(5, 9)}-${ndc.slice(9)}`

function patientRecords(
  orders: Resource[],
  count: number,
  seed: number,
  drugs: ReadonlyMap<string, BenchDrug>,
): Resource[] {
  // The patient is the Bundle's Patient; records past the first few leave `subject` out to fit 16 MiB.
  const subjectOf = (index: number) => (index < 10 ? { subject: { reference: `Patient/bench-${seed}` } } : {})
  const records: Resource[] = [{ resourceType: 'Patient', id: `bench-${seed}` }]
  for (let index = 0; records.length < count; index++) {
    const order = orders[(index * 7 + seed) % orders.length] as Resource
    const concept = order.medicationCodeableConcept as {
      coding: { code: string; display: string }[]
      text: string
    }
    const id = `${seed}-${index}`
    const drug = drugs.get(concept.coding[0]?.code ?? '') as BenchDrug
    const day = new Date(Date.UTC(2020, 0, 1) + ((index * 13) % 2000) * 86_400_000).toISOString().slice(0, 10)
    switch (index % 5) {
      case 0:
        records.push({ ...order, id: `r${id}`, ...subjectOf(index) })
        break
      case 1:
        // Ordered by brand: one drug with the generic orders through the release.
        records.push({
          ...order,
          id: `r${id}`,
          ...subjectOf(index),
          medicationCodeableConcept: {
            coding: [{ system: RXNORM, code: drug.sbd }],
            text: `Brand of ${concept.text}`,
          },
        })
        break
      case 2:
        records.push({
          resourceType: 'MedicationDispense',
          id: `d${id}`,
          status: index % 20 === 2 ? 'declined' : 'completed',
          ...subjectOf(index),
          whenHandedOver: day,
          daysSupply: { value: 30 },
          // A share coded by text alone (matched by text), a share by NDC alone (matched through the release).
          medicationCodeableConcept:
            index % 3 === 0
              ? { text: concept.text }
              : index % 3 === 1
                ? { coding: [{ system: NDC, code: dashed(drug.ndc) }], text: concept.text.toUpperCase() }
                : concept,
        })
        break
      case 3:
        records.push({
          resourceType: 'MedicationStatement',
          id: `s${id}`,
          status: index % 4 === 0 ? 'stopped' : 'active',
          ...subjectOf(index),
          effectiveDateTime: day,
          medicationCodeableConcept: concept,
        })
        break
      default:
        records.push({
          resourceType: 'MedicationAdministration',
          id: `a${id}`,
          status: 'completed',
          ...subjectOf(index),
          effectiveDateTime: day,
          medicationCodeableConcept: {
            coding: [{ system: RXNORM, code: concept.coding[0]?.code }],
            text: concept.text,
          },
        })
    }
  }
  return records
}

const bundleOf = (records: Resource[]) =>
  JSON.stringify({
    resourceType: 'Bundle',
    type: 'collection',
    entry: records.map((resource) => ({ resource })),
  })

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { entries: { type: 'string', default: '50000' }, samples: { type: 'string', default: '50' } },
  })
  const orders = readFileSync(
    join(packageRoot(), 'test', 'fixtures', 'medlist', 'synthea-10', 'MedicationRequest.ndjson'),
    'utf8',
  )
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Resource)
    // The fixture's orders of every patient, moved to one, with what reconciliation reads (so that 50,000
    // records fit the 16 MiB a call may send).
    .map((order) => ({
      resourceType: 'MedicationRequest',
      status: order.status,
      intent: order.intent,
      medicationCodeableConcept: compact(order.medicationCodeableConcept as Concept),
      authoredOn: order.authoredOn,
    }))
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-medlist-'))
  const dbPath = join(dir, 'svc.db')
  const setup = openDatabase(dbPath)
  const key = unlimitedBenchKey(setup)
  setup.close()
  const named = new Map<string, string>()
  for (const order of orders) {
    const concept = order.medicationCodeableConcept as Concept
    const code = concept.coding[0]?.code
    if (code) named.set(code, concept.text)
  }
  const rxnorm = writeBenchRxNorm(
    dir,
    [...named].map(([code, name]) => ({ code, name })),
  )
  await runCliJson(['import', 'terminology', rxnorm.folder, '--db', dbPath])
  const server = await startServeProcess({ SVC_DB: dbPath, SVC_ANSWER_CACHE_MB: '0' })
  try {
    const send = async (body: string) => {
      const response = await fetch(`${server.url}/v1/fhir/r4/Patient/$reconcile-medications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/fhir+json' },
        body,
      })
      const text = await response.text()
      if (response.status !== 200) throw new Error(`${response.status}: ${text.slice(0, 300)}`)
      return JSON.parse(text) as { entry: unknown[] }
    }
    const live = new Database(join(dir, 'svc.live.db'), { readonly: true })
    const serverTimes = () =>
      live
        .prepare(`SELECT duration_ms FROM request_log WHERE path LIKE '%reconcile%' ORDER BY rowid`)
        .pluck()
        .all() as number[]
    const baseline = peakRssMb(server.child.pid as number)
    const large = bundleOf(patientRecords(orders, Number(values.entries), 1, rxnorm.drugs))
    const started = performance.now()
    const answer = await send(large)
    const wall = performance.now() - started
    const rss = peakRssMb(server.child.pid as number)
    for (let sample = 0; sample < Number(values.samples); sample++)
      await send(bundleOf(patientRecords(orders, 200, 100 + sample, rxnorm.drugs)))
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const times = serverTimes()
    live.close()
    const largeMs = times[0] ?? wall
    const typical = times.slice(1).sort((a, b) => a - b)
    console.log(
      formatTable(
        ['input', 'records', 'server ms (p50)', 'p99', 'goal'],
        [
          [
            `one Bundle (${(large.length / 1024 / 1024).toFixed(1)} MB)`,
            Number(values.entries),
            largeMs.toFixed(0),
            '',
            `< 2000 ms: ${verdict(largeMs < 2000)}`,
          ],
          [
            `${typical.length} patients, each different`,
            200,
            percentile(typical, 50).toFixed(1),
            percentile(typical, 99).toFixed(1),
            `p50 < 20 ms: ${verdict(percentile(typical, 50) < 20)}`,
          ],
        ],
      ),
    )
    console.log(
      `\nThe large Bundle gave ${(answer.entry.length - 1) / 2} medications (${named.size} drugs, each also ordered by brand and dispensed by NDC, matched through a generated RxNorm release); wall time ${wall.toFixed(0)} ms over loopback. svc serve peak RSS ${rss.toFixed(0)} MB (${baseline.toFixed(0)} MB before; goal < 500 MB: ${verdict(rss < 500)}).`,
    )
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
