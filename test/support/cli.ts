import { type ChildProcess, spawn } from 'node:child_process'
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
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
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
