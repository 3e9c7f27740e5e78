import { createKey } from '../../src/accounts/keys.js'
import { createOrganization } from '../../src/accounts/orgs.js'
import type { RunningServer } from '../../src/app/server.js'
import type { Db } from '../../src/db/sqlite.js'
import {
  formatTable,
  type LoadResult,
  measure,
  medianOf,
  percentile,
  startBareServer,
  verdict,
} from './load.js'

const CONNECTIONS = 10
const ROUNDS = 3
const SAMPLES = 200

/**
 * A key whose plan no load run reaches (Scale allows 3,000 requests a minute: a run past it would measure
 * 429s). The limits are still checked on every request, as for any key.
 */
export function unlimitedBenchKey(db: Db): string {
  db.prepare("INSERT OR IGNORE INTO plans VALUES ('bench', 'Bench', 1000000000000, 1000000000, 0)").run()
  const org = `bench-${Date.now()}`
  createOrganization(db, { slug: org, plan: 'bench' })
  return createKey(db, { org }).key
}

/** A GET with the key, its body read whole; throws unless it answers 200. */
export async function getOk(url: string, key: string): Promise<void> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`)
}

/**
 * Server time of `requests` requests sent one at a time, `paths` in turn, each as the server measured it in
 * its request log (from the first middleware to the response sent), not as the client saw it; fewer when
 * `budgetMs` runs out first (a slow query is sampled for that long at most).
 */
export async function serverTimes(
  server: RunningServer,
  key: string,
  paths: readonly string[],
  { requests = SAMPLES, budgetMs = Number.POSITIVE_INFINITY }: { requests?: number; budgetMs?: number } = {},
) {
  await server.flush()
  const after = server.live.prepare('SELECT coalesce(max(rowid), 0) FROM request_log').pluck().get()
  const stopAt = performance.now() + budgetMs
  for (let sent = 0; sent < requests && performance.now() < stopAt; sent++) {
    await getOk(`${server.url}${paths[sent % paths.length]}`, key)
  }
  await server.flush()
  const times = server.live
    .prepare('SELECT duration_ms FROM request_log WHERE rowid > ? AND status = 200 ORDER BY duration_ms')
    .pluck()
    .all(after) as number[]
  return { p50: percentile(times, 50), p99: percentile(times, 99) }
}

/**
 * For each labelled set of query paths: p50 and p99 server time (answer cache as the server was started),
 * and req/s at 10 connections against bare node:http sending the same bytes, median of 3 rounds taken in
 * turn; printed as one table with each goal's verdict.
 */
export async function measureQueries(
  server: RunningServer,
  key: string,
  queries: readonly [label: string, paths: string[]][],
  options: {
    goals: Record<string, number>
    defaultGoal?: number
    ratioGoal: number
    durationSeconds: number
  },
): Promise<void> {
  const headers = { authorization: `Bearer ${key}` }
  const rows: (string | number)[][] = []
  for (const [label, paths] of queries) {
    const times = await serverTimes(server, key, paths)
    const response = await fetch(`${server.url}${paths[0]}`, { headers })
    const body = Buffer.from(await response.arrayBuffer())
    const bare = await startBareServer(body, { 'Content-Type': response.headers.get('content-type') ?? '' })
    const rounds = { ours: [] as LoadResult[], bare: [] as LoadResult[] }
    for (let round = 0; round < ROUNDS; round++) {
      rounds.ours.push(
        await measure(`${server.url}${paths[0]}`, {
          connections: CONNECTIONS,
          durationSeconds: options.durationSeconds,
          headers,
        }),
      )
      rounds.bare.push(
        await measure(`${bare.url}${paths[0]}`, {
          connections: CONNECTIONS,
          durationSeconds: options.durationSeconds,
        }),
      )
    }
    await bare.close()
    const refused = [...rounds.ours, ...rounds.bare].reduce(
      (sum, round) => sum + round.non2xx + round.errors,
      0,
    )
    if (refused > 0) throw new Error(`${label}: ${refused} requests failed or were not 2xx during the load`)
    const ours = medianOf(rounds.ours)
    const floor = medianOf(rounds.bare)
    const ratio = ours.requestsPerSecond / floor.requestsPerSecond
    const goal = options.goals[label] ?? options.defaultGoal ?? 2
    rows.push([
      label,
      body.length,
      times.p50.toFixed(2),
      times.p99.toFixed(2),
      Math.round(ours.requestsPerSecond),
      Math.round(floor.requestsPerSecond),
      ratio.toFixed(2),
      `p50 < ${goal} ms: ${verdict(times.p50 < goal)}; p99 < 20 ms: ${verdict(times.p99 < 20)}; ratio >= ${options.ratioGoal}: ${verdict(ratio >= options.ratioGoal)}`,
    ])
  }
  console.log(
    `\nServer time from the request log (${SAMPLES} requests one at a time, a different query each), req/s at ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${options.durationSeconds} s taken in turn with bare node:http sending the same bytes.`,
  )
  console.log(
    formatTable(['query', 'bytes', 'p50 ms', 'p99 ms', 'req/s', 'bare req/s', 'ratio', 'goals'], rows),
  )
}
