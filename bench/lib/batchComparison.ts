import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { Client } from 'undici'

// Issue 4: a batch of 100 $lookups against 100 sequential requests on one keep-alive connection, with the same
// headers and the same codes; each side reads its answers as text and parses none of them.

const BASE = '/v1/fhir/r4'
const NUCC = 'http://nucc.org/provider-taxonomy'

export interface LookupTarget {
  url: string
  key: string
  /** The NUCC codes to look up, all of them answered 200. */
  codes: string[]
}

export interface Comparison {
  sequentialMs: number[]
  batchMs: number[]
}

export const lookupPath = (codes: string[], i: number) =>
  `${BASE}/CodeSystem/$lookup?system=${NUCC}&code=${codes[i % codes.length]}&property=parent&property=definition`

/** A request on `client` whose answer is read as text, unpacked as the client that asked for gzip would. */
export function textSender(client: Client, key: string) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/fhir+json' }
  return async (method: 'GET' | 'POST', path: string, body?: string, extra: Record<string, string> = {}) => {
    const response = await client.request({ method, path, headers: { ...headers, ...extra }, body })
    const bytes = Buffer.from(await response.body.arrayBuffer())
    const text = (response.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString()
    if (response.statusCode !== 200)
      throw new Error(`${method} ${path} answered ${response.statusCode}: ${text}`)
    return text
  }
}

/** `rounds` of the comparison, after warm rounds that go through every code once (so both sides answer from kept answers). */
export async function compareBatch(
  send: ReturnType<typeof textSender>,
  codes: string[],
  rounds: number,
  extra: Record<string, string> = {},
): Promise<Comparison> {
  const batchBody = (first: number) =>
    JSON.stringify({
      resourceType: 'Bundle',
      type: 'batch',
      entry: Array.from({ length: 100 }, (_, i) => ({
        request: { method: 'GET', url: lookupPath(codes, first + i).slice(BASE.length + 1) },
      })),
    })
  const warmRounds = warmRoundsFor(codes)
  const sequentialMs: number[] = []
  const batchMs: number[] = []
  for (let round = 0; round < warmRounds + rounds; round++) {
    const body = batchBody(round * 100)
    let started = performance.now()
    for (let i = 0; i < 100; i++) await send('GET', lookupPath(codes, round * 100 + i), undefined, extra)
    const sequential = performance.now() - started
    started = performance.now()
    const text = await send('POST', BASE, body, extra)
    const batch = performance.now() - started
    // Read after the clock stops: the sequential side does not parse its answers either.
    const answer = JSON.parse(text) as { entry: { response: { status: string } }[] }
    if (answer.entry.some((entry) => entry.response.status !== '200 OK'))
      throw new Error('a batch entry failed')
    if (round >= warmRounds) {
      sequentialMs.push(sequential)
      batchMs.push(batch)
    }
  }
  return { sequentialMs, batchMs }
}

export const warmRoundsFor = (codes: string[]) => Math.ceil(codes.length / 100)

const SELF = fileURLToPath(import.meta.url)

/**
 * The comparison run by a client in a process of its own, as a deployment has it: the client's work (sending,
 * reading 100 KB of answer as text) no longer shares the server's thread, and each request crosses processes.
 */
export function compareBatchInOwnProcess(target: LookupTarget, rounds: number): Promise<Comparison> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SELF], { stdio: ['pipe', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the client process exited with ${code}`))
      resolve(JSON.parse(output) as Comparison)
    })
    child.stdin.end(JSON.stringify({ target, rounds }))
  })
}

if (process.argv[1] === SELF) {
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const { target, rounds } = JSON.parse(input) as { target: LookupTarget; rounds: number }
  const client = new Client(target.url, { pipelining: 1 })
  try {
    process.stdout.write(
      JSON.stringify(await compareBatch(textSender(client, target.key), target.codes, rounds)),
    )
  } finally {
    await client.close()
  }
}
