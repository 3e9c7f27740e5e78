import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type autocannon from 'autocannon'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { openDatabase, openLiveStore } from '../src/app/store.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { cpuSeconds, type MeasuredResult, runCliMeasured } from '../test/support/cli.js'
import { NATIONAL, npiOf as directoryNpi } from './lib/directoryData.js'
import { formatTable } from './lib/load.js'
import { type LoadProcess, startLoadProcess } from './lib/loadProcess.js'
import { checkSchedRecording, recordSched, type SchedWaits } from './lib/schedWaits.js'
import { FEED_START, locationOf, SERVICE_TYPES, SHAPE, startFeedProcess } from './lib/slotFeed.js'

/**
 * Issue 25's scenario: one `svc serve` under a mixed read load (20 connections, keys rotated over 120 Scale
 * organizations) on a national-shaped store, through an idle baseline, a full sync of every publisher, and a
 * directory import, each followed by the 5 s after it. Per phase: req/s (mean and worst second), p50, p99,
 * the slowest request, errors, and the server's own event-loop delay (server_processes).
 */

const CLI = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const ORGS = 120
const AFTER_SECONDS = 5
const NOW = new Date(FEED_START).toISOString()

function parse(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      publishers: { type: 'string', default: String(SHAPE.publishers) },
      // 0.057 of the generator's national directory: about 400,000 resources, the release.
      'directory-scale': { type: 'string', default: '0.057' },
      idle: { type: 'string', default: '20' },
      connections: { type: 'string', default: '20' },
      'answer-cache-mb': { type: 'string', default: '64' },
      /** The imports' importPriority (SVC_IMPORT_PRIORITY): low (the default) or idle. */
      'import-priority': { type: 'string' },
      /** svc serve's --workers: 1 (the default here) keeps the one serving process. */
      workers: { type: 'string', default: '1' },
      /** A folder for a CPU profile of svc serve over the whole run (node --cpu-prof), to see where it went. */
      'profile-server': { type: 'string' },
      /** Record the scheduler (perf sched, Linux, root) and say whom serving's thread waited behind. */
      sched: { type: 'boolean', default: false },
    },
  })
  return {
    publishers: Number(values.publishers),
    directoryScale: Number(values['directory-scale']),
    idleSeconds: Number(values.idle),
    connections: Number(values.connections),
    answerCacheMb: values['answer-cache-mb'],
    profileDir: values['profile-server'],
    importPriority: values['import-priority'],
    workers: values.workers,
    sched: values.sched,
  }
}

const env = (dbPath: string) => ({ PATH: process.env.PATH ?? '', SVC_DB: dbPath, SVC_FAKE_NOW: NOW })

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', resolve)
  })

/** A run's time, start to exit, in seconds as shown. */
const seconds = (run: MeasuredResult) => (run.ms / 1000).toFixed(1)

/**
 * `svc <args>` on the soak's store (an import), with its time and CPU seconds (runCliMeasured); what it says
 * on stderr is shown once it ends. `onStart` gets the process as it starts.
 */
async function svcImport(
  args: string[],
  dbPath: string,
  importPriority?: string,
  onStart?: (child: ChildProcess) => void,
): Promise<MeasuredResult> {
  const variables: Record<string, string> = env(dbPath)
  if (importPriority) variables.SVC_IMPORT_PRIORITY = importPriority
  const result = await runCliMeasured(args, variables, onStart)
  process.stderr.write(result.stderr)
  return result
}

function startServe(
  dbPath: string,
  answerCacheMb: string,
  profileDir: string | undefined,
  workers: string,
): Promise<{ url: string; child: ChildProcess }> {
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const child = spawn(
    process.execPath,
    [...profile, CLI, 'serve', '--port', '0', '--workers', workers, '--sync-interval', '0'],
    {
      env: { ...env(dbPath), SVC_ANSWER_CACHE_MB: answerCacheMb },
    },
  )
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout?.on('data', (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1]) resolve({ url: match[1], child })
    })
    child.once('exit', (code) => reject(new Error(`svc serve exited ${code}: ${output}`)))
  })
}

/** The read mix, each request with the key of one of the organizations in turn. */
function requestMix(keys: string[], publishers: number): autocannon.Request[] {
  const paths: string[] = []
  for (let p = 0; p < Math.min(publishers, 10); p++) {
    const { state, city } = locationOf(p, 11)
    paths.push(
      `/v1/scheduling/slots?state=${state}&serviceTypeCode=${SERVICE_TYPES[p % SERVICE_TYPES.length]}`,
      `/v1/scheduling/slots?city=${encodeURIComponent(city)}&limit=20`,
      `/v1/scheduling/provider-locations?state=${state}`,
      `/v1/fhir/r4/Practitioner?identifier=http://hl7.org/fhir/sid/us-npi|${directoryNpi(p * 997)}`,
      `/v1/fhir/r4/Practitioner?name=smi${String.fromCharCode(97 + p)}`,
      '/v1/fhir/r4/CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=female',
      '/v1/fhir/r4/metadata',
    )
  }
  paths.push('/v1/scheduling/slots?offset=50000&limit=100')
  return keys.flatMap((key, index) => {
    const path = paths[index % paths.length] as string
    return [{ method: 'GET', path, headers: { authorization: `Bearer ${key}` } }]
  })
}

/**
 * Where the machine's CPU went over a phase, in cores: the server, the phase's load process, the rest, idle;
 * and the share of the phase the server's event-loop thread spent runnable but waiting for a CPU.
 */
interface CpuShares {
  server: number
  load: number
  rest: number
  idle: number
  serverWaiting: number
}

/** Busy and idle CPU seconds of the whole machine so far (first line of /proc/stat, in USER_HZ: 1/100 s). */
function machineSeconds(): { busy: number; idle: number } {
  const [, ...values] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/)
  const ticks = values.map(Number)
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0)
  return { busy: (ticks.slice(0, 8).reduce((sum, tick) => sum + tick, 0) - idle) / 100, idle: idle / 100 }
}

/** Nanoseconds the thread has waited on a run queue so far (second field of its schedstat). */
function runQueueWait(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1])
}

/**
 * The processes that serve: svc serve itself, or with --workers above 1 its workers (its children; the primary
 * only starts them and answers nothing).
 */
function servingProcesses(pid: number): { all: number[]; answering: number[] } {
  const listed = `/proc/${pid}/task/${pid}/children`
  // Kernels built without CONFIG_PROC_CHILDREN do not list them: the primary alone is counted then.
  const children = existsSync(listed)
    ? readFileSync(listed, 'utf8').trim().split(' ').filter(Boolean).map(Number)
    : []
  return { all: [pid, ...children], answering: children.length > 0 ? children : [pid] }
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

/**
 * Starts counting; the returned function gives the shares since (where the platform has /proc), given the CPU
 * seconds the load's process used meanwhile.
 */
function cpuShares(serverPid: number): (loadSeconds: number) => CpuShares | undefined {
  if (!existsSync('/proc/stat') || !existsSync(`/proc/${serverPid}/task/${serverPid}/schedstat`))
    return () => undefined
  const serving = servingProcesses(serverPid)
  const before = {
    server: sum(serving.all.map(cpuSeconds)),
    machine: machineSeconds(),
    waited: sum(serving.answering.map(runQueueWait)),
  }
  const started = performance.now()
  return (loadSeconds) => {
    const cores = (seconds: number) => seconds / ((performance.now() - started) / 1000)
    const machine = machineSeconds()
    const server = cores(sum(serving.all.map(cpuSeconds)) - before.server)
    const load = cores(loadSeconds)
    return {
      server,
      load,
      rest: cores(machine.busy - before.machine.busy) - server - load,
      idle: cores(machine.idle - before.machine.idle),
      serverWaiting:
        (sum(serving.answering.map(runQueueWait)) - before.waited) /
        1e6 /
        (performance.now() - started) /
        serving.answering.length,
    }
  }
}

interface Phase {
  name: string
  seconds: number
  perSecond: number
  worstSecond: number
  p50: number
  p99: number
  max: number
  errors: number
  non2xx: number
  loopP99: number
  loopMax: number
  cpu: CpuShares | undefined
  waits: SchedWaits | undefined
}

/** What `--sched` records a phase into, and the processes it names. */
interface SchedOptions {
  file: string
  feedPid: number
  importPid?: number
}

/**
 * A process by its part in the soak (`serving`: svc serve's processes; `loadPid`: the phase's load), for whom
 * serving waited behind.
 */
function partOf(pid: number, serving: readonly number[], loadPid: number, sched: SchedOptions): string {
  if (pid === process.pid || pid === loadPid) return 'load'
  if (serving.includes(pid)) return 'serve'
  if (pid === sched.importPid) return 'import'
  if (pid === sched.feedPid) return 'feed'
  return 'other'
}

const WAITED_BEHIND = ['load', 'serve', 'import', 'feed', 'other']

/** Load until `until` settles (or for `seconds`), and what the server says of its event loop afterwards. */
async function load(
  name: string,
  url: string,
  requests: autocannon.Request[],
  connections: number,
  livePath: string,
  serverPid: number,
  until: Promise<unknown> | number,
  loader: LoadProcess,
  sched?: SchedOptions,
): Promise<Phase> {
  const started = performance.now()
  const cpu = cpuShares(serverPid)
  const recording = sched && recordSched(sched.file)
  if (typeof until !== 'number') void until.then(() => loader.stop())
  const result = await loader.run({
    url,
    connections,
    requests,
    ...(typeof until === 'number' ? { duration: until } : {}),
  })
  const seconds = (performance.now() - started) / 1000
  const shares = cpu(result.cpuSeconds)
  // Stopped with the load, read while the server writes its event-loop figures.
  // Looked up once: naming runs for every wait recorded, tens of thousands a phase.
  const serving = servingProcesses(serverPid)
  const waited =
    sched && recording?.stop(serving.answering, (pid) => partOf(pid, serving.all, loader.pid, sched))
  // Each serving process writes its event-loop delay over its last 10-20 s with its request log's flush.
  await new Promise((resolve) => setTimeout(resolve, 1200))
  const live = openLiveStore({ db: livePath })
  const loop = live
    .prepare('SELECT max(loop_p99_ms) AS p99, max(loop_max_ms) AS max FROM server_processes')
    .get() as {
    p99: number | null
    max: number | null
  }
  live.close()
  return {
    name,
    seconds,
    perSecond: result.perSecond,
    worstSecond: result.worstSecond,
    p50: result.p50,
    p99: result.p99,
    max: result.max,
    errors: result.errors,
    non2xx: result.non2xx,
    loopP99: loop.p99 ?? 0,
    loopMax: loop.max ?? 0,
    cpu: shares,
    waits: await waited,
  }
}

export async function run(args: string[]): Promise<void> {
  const options = parse(args)
  if (options.sched) checkSchedRecording()
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-soak-'))
  const dbPath = join(dir, 'svc.db')
  // The publishers' files are generated by the first sync and served as files from then on, as a publisher's
  // own server would: the generator's CPU is not the appliance's.
  const feedFiles = join(dir, 'feed')
  mkdirSync(feedFiles)
  const feed = await startFeedProcess(feedFiles)
  let serve: ChildProcess | undefined
  try {
    const setup = openDatabase(dbPath)
    const keys: string[] = []
    for (let org = 0; org < ORGS; org++) {
      createOrganization(setup, { slug: `soak-${org}`, plan: 'scale' })
      keys.push(createKey(setup, { org: `soak-${org}` }).key)
    }
    for (let p = 0; p < options.publishers; p++)
      addPublisher(setup, { slug: `p${p}`, manifestUrl: `${feed.url}/p${p}/$bulk-publish` })
    setup.close()

    const scale = Object.fromEntries(
      Object.entries(NATIONAL).map(([type, count]) => [
        type,
        Math.max(100, Math.round(count * options.directoryScale)),
      ]),
    )
    const input = join(dir, 'directory')
    console.log(
      `Generating the directory (${JSON.stringify(scale)}) and syncing ${options.publishers} publishers...`,
    )
    execFileSync(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(new URL('./lib/writeDirectoryFiles.ts', import.meta.url)),
        input,
        JSON.stringify(scale),
      ],
      { stdio: 'inherit' },
    )
    const first = await svcImport(['import', 'publishers'], dbPath)
    if (first.code !== 0) throw new Error('the first sync failed')
    const firstDirectory = await svcImport(['import', 'directory', input], dbPath)
    if (firstDirectory.code !== 0) throw new Error('the first import failed')
    console.log(
      `First sync ${seconds(first)} s (${first.cpuSeconds.toFixed(1)} CPU s), first directory import ${seconds(firstDirectory)} s (${firstDirectory.cpuSeconds.toFixed(1)} CPU s)`,
    )

    const server = await startServe(dbPath, options.answerCacheMb, options.profileDir, options.workers)
    serve = server.child
    const requests = requestMix(keys, options.publishers)
    /**
     * A phase of load: for `seconds`, or while an import runs, begun (`begin`) once the phase's load process
     * is ready, so that the import never runs unloaded.
     */
    const phase = async (
      name: string,
      length: number | (() => { until: Promise<unknown>; importPid: number }),
    ) => {
      const loader = await startLoadProcess()
      const { until, importPid } = typeof length === 'number' ? { until: length } : length()
      return load(
        name,
        server.url,
        requests,
        options.connections,
        dbPath,
        server.child.pid as number,
        until,
        loader,
        options.sched && name !== 'warm-up'
          ? { file: join(dir, 'sched.data'), feedPid: feed.pid, importPid }
          : undefined,
      )
    }
    /** An import under load: begun by `phase` (`begin`), then its figures (`done`). */
    const importUnderLoad = (args: string[]) => {
      let done: Promise<MeasuredResult> | undefined
      return {
        begin: () => {
          let pid = 0
          done = svcImport(args, dbPath, options.importPriority, (child) => (pid = child.pid as number))
          return { until: done, importPid: pid }
        },
        done: () => done as Promise<MeasuredResult>,
      }
    }
    // Warm: the first requests compile the request path and read what each query needs once.
    await phase('warm-up', 5)
    const phases: Phase[] = [await phase('idle', options.idleSeconds)]

    // A full sync: every publisher's manifest taken as new, as if each had published again.
    const main = openDatabase(dbPath)
    main
      .prepare(
        'UPDATE publishers SET manifest_etag = NULL, manifest_last_modified = NULL, manifest_sha256 = NULL, last_fetch_at = NULL',
      )
      .run()
    main.close()
    const sync = importUnderLoad(['import', 'publishers'])
    phases.push(await phase('during sync', sync.begin))
    const synced = await sync.done()
    phases.push(await phase('5 s after sync', AFTER_SECONDS))

    const directory = importUnderLoad(['import', 'directory', input])
    phases.push(await phase('during directory import', directory.begin))
    const directoryImported = await directory.done()
    phases.push(await phase('5 s after import', AFTER_SECONDS))

    const idle = phases[0] as Phase
    console.log(
      `\n${options.connections} connections, ${ORGS} Scale organizations' keys in turn, one svc serve (--workers ${options.workers}), imports at priority ${options.importPriority ?? 'low'}:`,
    )
    console.log(
      formatTable(
        [
          'phase',
          's',
          'req/s',
          'of idle',
          'worst s',
          'p50 ms',
          'p99 ms',
          'max ms',
          'errors',
          'non-2xx',
          'loop p99',
          'loop max',
          'cores: serve',
          'load',
          'rest',
          'idle',
          'serve waits',
        ],
        phases.map((p) => [
          p.name,
          p.seconds.toFixed(1),
          Math.round(p.perSecond),
          `${Math.round((100 * p.perSecond) / idle.perSecond)}%`,
          `${Math.round((100 * p.worstSecond) / idle.perSecond)}%`,
          p.p50,
          p.p99,
          p.max,
          p.errors,
          p.non2xx,
          p.loopP99.toFixed(1),
          p.loopMax.toFixed(1),
          ...(p.cpu
            ? [
                ...[p.cpu.server, p.cpu.load, p.cpu.rest, p.cpu.idle].map((c) => c.toFixed(2)),
                `${Math.round(100 * p.cpu.serverWaiting)}%`,
              ]
            : []),
        ]),
      ),
    )
    console.log(
      `Sync under load ${seconds(synced)} s, ${synced.cpuSeconds.toFixed(1)} CPU s (alone, the first: ${seconds(first)} s); directory import under load ${seconds(directoryImported)} s, ${directoryImported.cpuSeconds.toFixed(1)} CPU s (alone, the first: ${seconds(firstDirectory)} s)`,
    )
    console.log(
      'Cores: CPU used over the phase by svc serve, by the load generator (a process started for the phase), by everything else (the import, the feed), and left idle. Serve waits: share of the phase its event-loop thread (with workers, the mean of theirs) was runnable but waiting for a CPU.',
    )
    if (options.sched) {
      const servingCount = servingProcesses(server.child.pid as number).answering.length
      console.log(
        `\nWhom serving's event-loop thread (with workers, the mean of theirs) waited behind (perf sched): the share of the phase it was runnable while a task of this part of the soak held the CPU it then got.`,
      )
      console.log(
        formatTable(
          ['phase', 'waited', ...WAITED_BEHIND],
          phases.map((p) => {
            // With workers, each answering thread's waits are summed: their mean is the share of one.
            const recorded = (p.waits?.seconds ?? 0) * servingCount
            const share = (seconds: number) =>
              recorded > 0 ? `${((100 * seconds) / recorded).toFixed(1)}%` : '-'
            const behind = p.waits?.behind ?? new Map<string, number>()
            return [
              p.name,
              share(sum([...behind.values()])),
              ...WAITED_BEHIND.map((part) => share(behind.get(part) ?? 0)),
            ]
          }),
        ),
      )
    }
    console.log(
      'Goals (issue 25): during the sync >= 70% of idle, no second under 40%, p99 < 50 ms; no request over 250 ms in the 5 s after; the same during the import; loop p99 < 20 ms.',
    )
  } finally {
    serve?.kill('SIGTERM')
    if (serve) await exited(serve)
    feed.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
