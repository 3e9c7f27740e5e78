import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runCliJson, type ServeProcess, startServeProcess } from '../test/support/cli.js'
import { formatTable, type LoadResult, measure, medianOf } from './lib/load.js'

/**
 * `npm run bench -- workers [--duration 5] [--connections 50]`: the overhead bench's cheap request
 * (`GET /v1/scheduling/publishers`, key checked and counted) against real `svc serve --workers 1` and
 * `--workers 2` processes, and against a bare node:http cluster of 2 sending the same bytes, each the median
 * of 3 rounds taken in turn. The load generator shares the machine (2 cores here): the ratios are what to read.
 */
const PATH = '/v1/scheduling/publishers'

function startBareCluster(workers: number, body: Buffer): Promise<{ url: string; child: ChildProcess }> {
  const script = fileURLToPath(new URL('./lib/bareCluster.ts', import.meta.url))
  const child = spawn(process.execPath, [
    ...process.execArgv,
    script,
    String(workers),
    body.toString('base64'),
  ])
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      const port = /listening (\d+)/.exec(output)?.[1]
      if (port) resolve({ url: `http://127.0.0.1:${port}`, child })
    })
    child.once('exit', (code) => reject(new Error(`bare cluster exited (${code}): ${output}`)))
  })
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' } },
  })
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-workers-'))
  // Before 2026-11-01 no limit refuses, yet every request is counted: the counted path without 429s.
  const env = { SVC_DB: join(dir, 'svc.db'), SVC_FAKE_NOW: '2026-10-15T12:00:00Z' }
  const servers: ServeProcess[] = []
  try {
    await runCliJson(['orgs', 'create', 'bench', '--plan', 'scale'], env)
    const { key } = await runCliJson<{ key: string }>(['keys', 'create', '--org', 'bench'], env)
    const headers = { authorization: `Bearer ${key}` }
    const one = await startServeProcess(env, ['--workers', '1', '--sync-interval', '0'])
    servers.push(one)
    const two = await startServeProcess(env, ['--workers', '2', '--sync-interval', '0'])
    servers.push(two)
    const body = Buffer.from(await (await fetch(`${one.url}${PATH}`, { headers })).arrayBuffer())
    const bare = await startBareCluster(2, body)
    const load = (url: string, withKey: boolean) =>
      measure(`${url}${PATH}`, {
        connections: Number(values.connections),
        durationSeconds: Number(values.duration),
        ...(withKey ? { headers } : {}),
      })
    const rounds: Record<string, LoadResult[]> = { one: [], two: [], bare: [] }
    try {
      for (let round = 0; round < 3; round++) {
        rounds.one?.push(await load(one.url, true))
        rounds.two?.push(await load(two.url, true))
        rounds.bare?.push(await load(bare.url, false))
      }
    } finally {
      bare.child.kill('SIGTERM')
    }
    const failed = Object.values(rounds)
      .flat()
      .reduce((sum, result) => sum + result.non2xx + result.errors, 0)
    if (failed > 0) throw new Error(`${failed} requests failed or were not 2xx`)
    const [ones, twos, bares] = [
      medianOf(rounds.one ?? []),
      medianOf(rounds.two ?? []),
      medianOf(rounds.bare ?? []),
    ]
    console.log(`GET ${PATH}, ${values.connections} connections, median of 3 rounds of ${values.duration} s`)
    console.log(
      formatTable(
        ['server', 'req/s', 'p50 ms', 'p99 ms'],
        [
          ['svc serve --workers 1', Math.round(ones.requestsPerSecond), ones.latencyP50Ms, ones.latencyP99Ms],
          ['svc serve --workers 2', Math.round(twos.requestsPerSecond), twos.latencyP50Ms, twos.latencyP99Ms],
          [
            'bare node:http cluster of 2',
            Math.round(bares.requestsPerSecond),
            bares.latencyP50Ms,
            bares.latencyP99Ms,
          ],
        ],
      ),
    )
    console.log(
      `--workers 2 / --workers 1: ${(twos.requestsPerSecond / ones.requestsPerSecond).toFixed(2)}; ` +
        `--workers 2 / bare cluster of 2: ${(twos.requestsPerSecond / bares.requestsPerSecond).toFixed(2)}`,
    )
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
}
