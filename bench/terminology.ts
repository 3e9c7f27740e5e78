import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { Client } from 'undici'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { liveDatabasePath } from '../src/db/live.js'
import { openDatabase } from '../src/app/store.js'
import { type RunningServer, startServer } from '../src/app/server.js'
import { ensureBundledTerminology } from '../src/terminology/bundled.js'
import { importTerminology } from '../src/terminology/import/importFiles.js'
import { allConcepts, findCodeSystem } from '../src/terminology/store.js'
import {
  compareBatch,
  compareBatchInOwnProcess,
  lookupPath,
  textSender,
  warmRoundsFor,
} from './lib/batchComparison.js'
import { formatTable, median, percentile, verdict } from './lib/load.js'

// Issue 4's figures: $lookup server time (p50 < 1 ms); a batch of 100 $lookups against 100 sequential
// requests on one keep-alive connection (batch >= 10x faster), measured by a client in this process and by one
// in a process of its own; $expand with a filter on NUCC (p50 < 5 ms).
const NUCC = 'http://nucc.org/provider-taxonomy'
const NUCC_CSV = new URL('../data/demo/terminology/nucc_provider_taxonomy.csv', import.meta.url).pathname
const LOOKUP_GOAL_MS = 1
const EXPAND_GOAL_MS = 5
const BATCH_RATIO_GOAL = 10
const BASE = '/v1/fhir/r4'

// Limits are in force from 2026-11-01: a clock before it counts every request but refuses none.
const clock = () => Date.parse('2026-10-15T12:00:00Z')

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { requests: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '30' } },
  })
  const requests = Number(values.requests)
  const rounds = Number(values.rounds)
  if (!Number.isInteger(requests) || requests < 100) throw new Error('--requests must be an integer >= 100')
  if (!Number.isInteger(rounds) || rounds < 5) throw new Error('--rounds must be an integer >= 5')
  return { requests, rounds }
}

export async function run(args: string[]): Promise<void> {
  const { requests, rounds } = parseOptions(args)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-terminology-'))
  const dbPath = join(dir, 'svc.db')
  let server: RunningServer | undefined
  let client: Client | undefined
  try {
    const config = await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {})
    const setup = openDatabase(dbPath)
    createOrganization(setup, { slug: 'bench', plan: 'scale' })
    const { key } = createKey(setup, { org: 'bench' })
    ensureBundledTerminology(setup, clock())
    await importTerminology(setup, [NUCC_CSV], { release: 'bench', now: clock() })
    const nucc = findCodeSystem(setup, NUCC)
    const codes = nucc ? allConcepts(setup, nucc.id).map((concept) => concept.code) : []
    setup.close()

    server = await startServer(config, clock, { requestLogFlushMs: 100 })
    client = new Client(server.url, { pipelining: 1 })
    const send = textSender(client, key)
    // Browsers, fetch, python-requests and most FHIR clients send this; curl and undici's Client do not.
    const gzip = { 'accept-encoding': 'gzip' }
    const lookup = (i: number) => lookupPath(codes, i)

    // 1. $lookup server time, from the request log (the server's own measure of each request).
    for (let i = 0; i < 300; i++) await send('GET', lookup(i))
    for (let i = 0; i < requests; i++) await send('GET', lookup(i))

    // 2. 100 lookups: one batch against 100 sequential requests (bench/lib/batchComparison.ts), by a client
    // in this process, the same asking for gzip, and a client in a process of its own.
    const plain = await compareBatch(send, codes, rounds)
    const gzipped = await compareBatch(send, codes, rounds, gzip)
    const ownProcess = await compareBatchInOwnProcess({ url: server.url, key, codes }, rounds)

    // 3. $expand with a text filter on the largest code system held (NUCC).
    const words = [
      'family',
      'physician',
      'nurse',
      'pediatric',
      'surg',
      'counselor',
      'dental',
      'clinic',
      'pharm',
      'therap',
    ]
    const expandCount = Math.max(500, Math.floor(requests / 3))
    for (let i = 0; i < expandCount; i++) {
      await send(
        'GET',
        `${BASE}/ValueSet/$expand?url=${encodeURIComponent(`${NUCC}?fhir_vs`)}&filter=${words[i % words.length]}&count=20`,
      )
    }

    await client.close()
    client = undefined
    await server.close()
    server = undefined

    const log = new Database(liveDatabasePath(dbPath), { readonly: true })
    // In request order (the bench clock is fixed, so rowid orders them): skip the warm-up, keep the measured run.
    const durations = (route: string, from: number, count: number, method = 'GET') =>
      (
        log
          .prepare('SELECT duration_ms FROM request_log WHERE route = ? AND method = ? ORDER BY rowid')
          .pluck()
          .all(route, method) as number[]
      )
        .slice(from, from + count)
        .sort((a, b) => a - b)
    const lookups = durations(`${BASE}/CodeSystem/$lookup`, 300, requests)
    const expands = durations(`${BASE}/ValueSet/$expand`, 0, expandCount)
    // The plain comparison's batches (the gzip one's follow them).
    const batches = durations(BASE, warmRoundsFor(codes), rounds, 'POST')
    log.close()

    const ratio = ({ sequentialMs, batchMs }: { sequentialMs: number[]; batchMs: number[] }) =>
      median(sequentialMs) / median(batchMs)
    const wallRows = (
      label: string,
      { sequentialMs, batchMs }: { sequentialMs: number[]; batchMs: number[] },
    ) => {
      const sortedSeq = [...sequentialMs].sort((a, b) => a - b)
      const sortedBatch = [...batchMs].sort((a, b) => a - b)
      return [
        [
          `100 sequential $lookups, ${label} (wall)`,
          median(sortedSeq).toFixed(2),
          percentile(sortedSeq, 99).toFixed(2),
          '',
          '',
        ],
        [
          `one batch of 100 $lookups, ${label} (wall)`,
          median(sortedBatch).toFixed(2),
          percentile(sortedBatch, 99).toFixed(2),
          '',
          '',
        ],
      ]
    }
    console.log(
      `terminology figures (${requests} $lookups, ${rounds} rounds of 100 lookups, ${expandCount} filtered $expands; NUCC ${codes.length} codes)\n`,
    )
    console.log(
      formatTable(
        ['figure', 'p50 ms', 'p99 ms', 'goal', 'verdict'],
        [
          [
            '$lookup server time',
            median(lookups).toFixed(3),
            percentile(lookups, 99).toFixed(3),
            `p50 < ${LOOKUP_GOAL_MS} ms`,
            verdict(median(lookups) < LOOKUP_GOAL_MS),
          ],
          [
            '$expand NUCC filter server time',
            median(expands).toFixed(3),
            percentile(expands, 99).toFixed(3),
            `p50 < ${EXPAND_GOAL_MS} ms`,
            verdict(median(expands) < EXPAND_GOAL_MS),
          ],
          ...wallRows('identity', plain),
          [
            'one batch of 100 $lookups, identity (server time)',
            median(batches).toFixed(2),
            percentile(batches, 99).toFixed(2),
            '',
            '',
          ],
          [
            'batch speed-up, identity (sequential / batch)',
            `${ratio(plain).toFixed(1)}x`,
            '',
            `>= ${BATCH_RATIO_GOAL}x`,
            verdict(ratio(plain) >= BATCH_RATIO_GOAL),
          ],
          ...wallRows('Accept-Encoding gzip', gzipped),
          [
            'batch speed-up, Accept-Encoding gzip',
            `${ratio(gzipped).toFixed(1)}x`,
            '',
            `>= ${BATCH_RATIO_GOAL}x`,
            verdict(ratio(gzipped) >= BATCH_RATIO_GOAL),
          ],
          ...wallRows('client in its own process', ownProcess),
          [
            'batch speed-up, client in its own process',
            `${ratio(ownProcess).toFixed(1)}x`,
            '',
            `>= ${BATCH_RATIO_GOAL}x`,
            verdict(ratio(ownProcess) >= BATCH_RATIO_GOAL),
          ],
        ],
      ),
    )
  } finally {
    await client?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
