import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The built CLI (`npm test` builds first), run as a user would run it. */
export const CLI = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `svc <args>` to completion with only the given environment (plus PATH), so the machine's SVC_* never leak in. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

export async function runCliJson<T = any>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const result = await runCli([...args, '--json'], env)
  if (result.code !== 0) throw new Error(`svc ${args.join(' ')} failed (${result.code}): ${result.stderr}`)
  return JSON.parse(result.stdout) as T
}

export interface ServeProcess {
  url: string
  child: ChildProcess
  output(): string
  stop(): Promise<void>
}

/** Starts `svc serve` on a free loopback port and resolves once it says where it listens. */
export function startServeProcess(env: Record<string, string>, args: string[] = []): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    // One process unless a test asks for workers: what most tests measure is one server.
    const workers = args.includes('--workers') ? [] : ['--workers', '1']
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...workers, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
    })
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1]) {
        resolve({
          url: match[1],
          child,
          output: () => output,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done()
              child.once('exit', () => done())
              child.kill('SIGTERM')
            }),
        })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk) => {
      output += chunk
    })
    child.once('exit', (code) => reject(new Error(`svc serve exited (${code}): ${output}`)))
  })
}

export interface MeasuredResult extends CliResult {
  /** Wall time of the run. */
  ms: number
  /** The process's peak resident memory (VmHWM, read from /proc while it ran), in MB. */
  peakRssMb: number
  /** CPU time it used, every thread, user and system (read from /proc while it ran), in seconds; 0 elsewhere. */
  cpuSeconds: number
}

/** The peak resident memory of a running process so far (Linux), in MB; 0 once it is gone. */
export function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** CPU time a running process has used so far, every thread, user and system (Linux), in seconds; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Past the command name, which may hold spaces: utime and stime are fields 14 and 15, in USER_HZ (1/100 s).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

/**
 * Runs `svc <args>` like runCli, measuring its wall time, peak RSS and CPU time. VmHWM and CPU time only
 * grow, so the last readings before the process ends are its figures but for its last few milliseconds.
 * `onStart` may signal it.
 */
export function runCliMeasured(
  args: string[],
  env: Record<string, string> = {},
  onStart?: (child: ChildProcess) => void,
): Promise<MeasuredResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } })
    let stdout = ''
    let stderr = ''
    let peak = 0
    let cpu = 0
    const poll = setInterval(() => {
      peak = Math.max(peak, peakRssMb(child.pid as number))
      cpu = Math.max(cpu, cpuSeconds(child.pid as number))
    }, 20)
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('exit', () => {
      clearInterval(poll)
    })
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal ? -1 : null),
        stdout,
        stderr,
        ms: performance.now() - started,
        peakRssMb: peak,
        cpuSeconds: cpu,
      }),
    )
    onStart?.(child)
  })
}

/** oclif wraps its messages to the terminal (with ›): a command's output read as one line. */
export const oneLine = (text: string) => text.replace(/[\s›]+/g, ' ').trim()
