import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CLI } from '../test/support/cli.js'
import { formatTable, percentile, verdict } from './lib/load.js'

/**
 * `npm run bench -- cli [--runs 15]`: how long `svc` commands take from start to exit, each run as a person
 * runs it (a new process), against `node -e 0` measured in the same run. Goal: under 300 ms for commands that
 * touch one domain. Needs a build (`npm run build`: the oclif manifest it writes is what keeps a command
 * from loading every other one).
 */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '15' } } })
  const runs = Number(values.runs)
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-cli-'))
  const db = join(dir, 'svc.db')
  const env = { PATH: process.env.PATH ?? '', SVC_DB: db }
  const timed = (command: string[], each?: (run: number) => string[]) => {
    const times: number[] = []
    for (let run = 0; run < runs; run++) {
      const started = performance.now()
      const result = spawnSync(process.execPath, each ? [...command, ...each(run)] : command, { env })
      times.push(performance.now() - started)
      if (result.status !== 0) throw new Error(`${command.join(' ')} failed: ${result.stderr.toString()}`)
    }
    return times.sort((a, b) => a - b)
  }
  try {
    spawnSync(process.execPath, [CLI, 'orgs', 'create', 'bench'], { env })
    const rows: (string | number)[][] = []
    const node = timed(['-e', '0'])
    rows.push(['node -e 0', percentile(node, 50).toFixed(0), percentile(node, 99).toFixed(0), ''])
    const commands: [string, string[], ((run: number) => string[])?][] = [
      ['svc --version', [CLI, '--version']],
      ['svc orgs list', [CLI, 'orgs', 'list']],
      ['svc orgs create', [CLI, 'orgs', 'create'], (run) => [`org-${run}`]],
      ['svc keys create', [CLI, 'keys', 'create', '--org', 'bench']],
      ['svc keys list', [CLI, 'keys', 'list', '--org', 'bench']],
      ['svc publishers list', [CLI, 'publishers', 'list']],
    ]
    for (const [label, command, each] of commands) {
      const times = timed(command, each)
      const p50 = percentile(times, 50)
      rows.push([
        label,
        p50.toFixed(0),
        percentile(times, 99).toFixed(0),
        `p50 < 300 ms: ${verdict(p50 < 300)}`,
      ])
    }
    console.log(`Wall time of each command from start to exit, ${runs} runs each, in ms.`)
    console.log(formatTable(['command', 'p50', 'p99', 'goal'], rows))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
