import { once } from 'node:events'
import { createServer, type OutgoingHttpHeaders, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import autocannon from 'autocannon'

export interface LoadOptions {
  connections: number
  durationSeconds: number
  headers?: Record<string, string>
}

export interface LoadResult {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  non2xx: number
  errors: number
}

/**
 * Drives `url` with autocannon. The load generator runs in a worker thread: on the main thread it would
 * share the event loop with an in-process server under test and hide part of that server's cost.
 */
export async function measure(url: string, options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationSeconds,
    headers: options.headers,
    workers: 1,
  })
  return {
    requestsPerSecond: result.requests.mean,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    // A timed-out request is a failure too; autocannon counts it apart from errors.
    errors: result.errors + result.timeouts,
  }
}

export interface BareServer {
  url: string
  close(): Promise<void>
}

/** node:http with `handle` as its only code, on a loopback port. */
async function serveBare(handle: RequestListener): Promise<BareServer> {
  const server = createServer(handle)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The floor to compare against: plain node:http sending fixed bytes, no routing, auth or store. */
export function startBareServer(body: Buffer, headers: OutgoingHttpHeaders): Promise<BareServer> {
  // Content-Length given up front, as Koa does for a buffered body, so neither side pays for chunking.
  const head = { ...headers, 'Content-Length': body.length }
  return serveBare((_request, response) => {
    response.writeHead(200, head)
    response.end(body)
  })
}

/** The same floor for varied queries: each path answered with the bytes and media type in `answers`. */
export function startBareAnswers(
  answers: ReadonlyMap<string, { bytes: Buffer; type: string }>,
): Promise<BareServer> {
  return serveBare((request, response) => {
    const answer = answers.get(request.url ?? '')
    if (!answer) return void response.writeHead(404).end()
    response.writeHead(200, { 'Content-Type': answer.type, 'Content-Length': answer.bytes.length })
    response.end(answer.bytes)
  })
}

/** Nearest-rank percentile of numbers already sorted ascending; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1] as number
}

/** Median of unsorted numbers; with an even count, the mean of the middle two. */
export function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b)
  const middle = sorted.length / 2
  if (sorted.length === 0) return Number.NaN
  return Number.isInteger(middle)
    ? ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
    : (sorted[Math.floor(middle)] as number)
}

/** Plain-text table: first column left-aligned (labels), the others right-aligned (figures). */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = [header, ...rows].map((row) => row.map(String))
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)))
  const line = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ')
  const rule = widths.map((width) => '-'.repeat(width)).join('  ')
  return [line(cells[0] ?? []), rule, ...cells.slice(1).map(line)].join('\n')
}

/** Median of each figure across rounds, so one noisy round does not decide the result. */
export function medianOf(rounds: LoadResult[]): LoadResult {
  const of = (pick: (round: LoadResult) => number) => median(rounds.map(pick))
  return {
    requestsPerSecond: of((round) => round.requestsPerSecond),
    latencyP50Ms: of((round) => round.latencyP50Ms),
    latencyP99Ms: of((round) => round.latencyP99Ms),
    // Failures are summed, not medianed: any of them means a round measured something else.
    non2xx: rounds.reduce((sum, round) => sum + round.non2xx, 0),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
  }
}

/** A table of load results, one labelled row each. */
export function loadTable(rows: [label: string, result: LoadResult][]): string {
  return formatTable(
    ['server', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'],
    rows.map(([label, result]) => [
      label,
      Math.round(result.requestsPerSecond),
      result.latencyP50Ms,
      result.latencyP99Ms,
      result.non2xx,
      result.errors,
    ]),
  )
}

export const verdict = (met: boolean) => (met ? 'met' : 'NOT met')
