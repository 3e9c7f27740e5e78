import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGzip } from 'node:zlib'
import { request } from 'undici'
import { peakRssMb, runCliJson, runCliMeasured, startServeProcess } from '../test/support/cli.js'
import { SMART_EXAMPLES } from '../test/support/fixtures.js'
import { formatTable } from './lib/load.js'

/**
 * The hostile inputs of issue 22 at full size and the default limits, through the real CLI and `svc serve`:
 * each case's outcome, wall time and peak RSS (VmHWM). Usage: npm run bench -- hostile (builds first: the CLI
 * runs from dist/).
 */

const MB = 1024 * 1024
const practitioner = (i: number) =>
  JSON.stringify({ resourceType: 'Practitioner', id: `p${i}`, name: [{ family: `Family${i}` }] })
const good = (count: number) => `${Array.from({ length: count }, (_, i) => practitioner(i)).join('\n')}\n`

interface Row {
  case: string
  outcome: string
  'wall s': string
  'peak RSS MB': string
}

const row = (name: string, outcome: string, ms: number, rss: number): Row => ({
  case: name,
  outcome,
  'wall s': (ms / 1000).toFixed(1),
  'peak RSS MB': rss.toFixed(0),
})

/** Writes `chunks` chunks of `piece` then `tail` into a gzip file, in constant memory. */
async function gzipFile(path: string, piece: Buffer, chunks: number, tail: string): Promise<void> {
  const gzip = createGzip({ level: 9 })
  const out = gzip.pipe(createWriteStream(path))
  for (let i = 0; i < chunks; i++) if (!gzip.write(piece)) await once(gzip, 'drain')
  gzip.end(tail)
  await once(out, 'finish')
}

async function server(
  handler: (path: string, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  const created = createServer((req, res) => handler(new URL(req.url ?? '/', 'http://x').pathname, res))
  created.listen(0, '127.0.0.1')
  await once(created, 'listening')
  return { url: `http://127.0.0.1:${(created.address() as AddressInfo).port}`, server: created }
}

function endless(res: ServerResponse, piece: () => string): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/fhir+ndjson' })
  const write = () => {
    while (!res.destroyed && res.write(piece()));
    if (!res.destroyed) res.once('drain', write)
  }
  res.on('close', () => res.removeAllListeners('drain'))
  write()
}

/** What a run said of itself: the first message of its --json reports, or its first error or notice line. */
const outcomeOf = (stdout: string, stderr: string, code: number | null) => {
  const text = `${stdout}\n${stderr}`.replace(/[\s›]+/g, ' ')
  const said =
    /"message":\s*"([^"]+)"/.exec(text)?.[1] ?? /((?:Error|Interrupted|Terminated): .*)/.exec(text)?.[1] ?? ''
  return `exit ${code}: ${said.slice(0, 120)}`
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-hostile-'))
  const rows: Row[] = []
  try {
    const store = (name: string) => {
      mkdirSync(join(dir, name))
      return { SVC_DB: join(dir, name, 'svc.db') }
    }

    // 1. A 300 MB record, then 2,000 good ones.
    {
      const env = store('huge-record')
      const file = join(dir, 'huge-record', 'Practitioner.ndjson')
      writeFileSync(
        file,
        `${JSON.stringify({ resourceType: 'Practitioner', id: 'huge', text: 'x'.repeat(300 * MB) })}\n${good(2000)}`,
      )
      const result = await runCliMeasured(['import', 'directory', file, '--json'], env)
      const summary = JSON.parse(result.stdout)
      rows.push(
        row(
          'directory: one 300 MB record, then 2,000 good',
          `${summary.imported} imported; line 1: ${summary.problems[0]?.message}`,
          result.ms,
          result.peakRssMb,
        ),
      )
    }

    // 2. A 2 MB .ndjson.gz inflating to one 2 GiB line.
    {
      const env = store('bomb')
      const file = join(dir, 'bomb', 'Practitioner.ndjson.gz')
      await gzipFile(file, Buffer.alloc(MB, 'a'), 2048, `\n${good(10)}`)
      const result = await runCliMeasured(['import', 'directory', file, '--json'], env)
      const summary = JSON.parse(result.stdout)
      rows.push(
        row(
          'directory: 2 MB .gz inflating to one 2 GiB line',
          `${summary.imported} imported; line 1: ${summary.problems[0]?.message}`,
          result.ms,
          result.peakRssMb,
        ),
      )
    }

    // 3. A record nested 100,000 deep, and one with invalid UTF-8.
    {
      const env = store('deep')
      const file = join(dir, 'deep', 'Practitioner.ndjson')
      const deep = `{"resourceType":"Practitioner","id":"deep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`
      const latin = Buffer.from(
        '{"resourceType":"Practitioner","id":"latin","name":[{"family":"Mu\xf1oz"}]}',
        'latin1',
      )
      writeFileSync(file, Buffer.concat([Buffer.from(`${deep}\n`), latin, Buffer.from(`\n${good(10)}`)]))
      const result = await runCliMeasured(['import', 'directory', file, '--json'], env)
      const summary = JSON.parse(result.stdout)
      rows.push(
        row(
          'directory: nested 100,000 deep; invalid UTF-8',
          summary.problems
            .map((p: { line: number; message: string }) => `line ${p.line}: ${p.message}`)
            .join('; '),
          result.ms,
          result.peakRssMb,
        ),
      )
    }

    // 4. Ctrl-C in the middle of a 400,000-resource import.
    {
      const env = store('interrupt')
      const file = join(dir, 'interrupt', 'Practitioner.ndjson')
      writeFileSync(file, good(400_000))
      let sent = 0
      const result = await runCliMeasured(['import', 'directory', file], env, (child) => {
        setTimeout(() => {
          sent = performance.now()
          child.kill('SIGINT')
        }, 2000)
      })
      rows.push(
        row(
          'directory: Ctrl-C after 2 s (wall: signal to exit)',
          outcomeOf(
            '',
            result.stderr.split('\n').find((line) => line.includes('Interrupted')) ?? '',
            result.code,
          ),
          performance.now() - sent,
          result.peakRssMb,
        ),
      )
    }

    // 5-6. Publishers whose Slot file is one endless line, or valid slots without end.
    for (const [name, writer, sourceMb] of [
      [
        'publisher: Slot file is one endless line',
        (res: ServerResponse) => endless(res, () => 'x'.repeat(64 * 1024)),
        undefined,
      ],
      [
        'publisher: valid slots without end (SVC_IMPORT_MAX_SOURCE_MB=1024)',
        (res: ServerResponse) => {
          let i = 0
          endless(
            res,
            () =>
              `${JSON.stringify({ resourceType: 'Slot', id: `s${i++}`, schedule: { reference: 'Schedule/10' }, status: 'free', start: '2026-11-25T10:00:00Z', end: '2026-11-25T10:15:00Z' })}\n`,
          )
        },
        '1024',
      ],
    ] as const) {
      const feed = await server((path, res) => {
        if (path === '/$bulk-publish') {
          res.end(
            JSON.stringify({
              transactionTime: new Date().toISOString(),
              output: [
                { type: 'Location', url: '/locations.ndjson' },
                { type: 'Schedule', url: '/schedules.ndjson' },
                { type: 'Slot', url: '/slots.ndjson' },
              ],
            }),
          )
        } else if (path === '/slots.ndjson') writer(res)
        else res.end(readFileSync(join(SMART_EXAMPLES, path.slice(1))))
      })
      try {
        const env = {
          ...store(`publisher-${rows.length}`),
          ...(sourceMb ? { SVC_IMPORT_MAX_SOURCE_MB: sourceMb } : {}),
        }
        await runCliJson(['publishers', 'add', 'hostile', '--manifest', `${feed.url}/$bulk-publish`], env)
        const result = await runCliMeasured(['import', 'publishers', '--json'], env)
        rows.push(
          row(name, outcomeOf(result.stdout, result.stderr, result.code), result.ms, result.peakRssMb),
        )
      } finally {
        feed.server.closeAllConnections()
        feed.server.close()
      }
    }

    // 7-8. A remote directory answering a resource nested 100,000 deep, and a 400 MB Practitioner.
    {
      const upstream = await server((path, res) => {
        res.writeHead(200, { 'content-type': 'application/fhir+json' })
        if (path.endsWith('/deep'))
          res.end(
            `{"resourceType":"Practitioner","id":"deep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
          )
        else if (path.endsWith('/huge')) {
          let sent = 0
          endless(res, () => {
            sent += 64 * 1024
            if (sent >= 400 * MB) res.end()
            return 'x'.repeat(64 * 1024)
          })
        } else res.end(JSON.stringify({ resourceType: 'Practitioner', id: 'small' }))
      })
      const env = { ...store('remote'), SVC_DIRECTORY_URL: `${upstream.url}/fhir` }
      await runCliJson(['orgs', 'create', 'ops', '--plan', 'scale'], env)
      const { key } = await runCliJson<{ key: string }>(['keys', 'create', '--org', 'ops'], env)
      const serve = await startServeProcess(env, ['--sync-interval', '0'])
      try {
        const read = async (id: string) => {
          const started = performance.now()
          const response = await request(`${serve.url}/v1/fhir/r4/Practitioner/${id}`, {
            headers: { authorization: `Bearer ${key}` },
          })
          const text = await response.body.text()
          return { status: response.statusCode, text, ms: performance.now() - started }
        }
        await read('small')
        const ordinary = peakRssMb(serve.child.pid as number)
        for (const id of ['deep', 'huge']) {
          const answer = await read(id)
          const detail = (JSON.parse(answer.text) as { issue: { details: { text: string } }[] }).issue[0]
            ?.details.text
          rows.push(
            row(
              `remote directory answering ${id === 'deep' ? 'a resource nested 100,000 deep' : 'a 400 MB Practitioner'}`,
              `${answer.status}: ${detail} (server peak RSS +${(peakRssMb(serve.child.pid as number) - ordinary).toFixed(0)} MB over an ordinary answer)`,
              answer.ms,
              peakRssMb(serve.child.pid as number),
            ),
          )
        }
      } finally {
        await serve.stop()
        upstream.server.closeAllConnections()
        upstream.server.close()
      }
    }
    console.log(
      formatTable(
        ['case', 'wall s', 'peak RSS MB', 'outcome'],
        rows.map((entry) => [entry.case, entry['wall s'], entry['peak RSS MB'], entry.outcome]),
      ),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
