import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from './support/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'svc-demo-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('svc demo', () => {
  it('prints a key and commands that work against the port it listens on, even a port picked at start', async () => {
    const child = spawn(process.execPath, [CLI, 'demo', '--port', '0', '--db', join(dir, 'svc.db')], {
      env: { PATH: process.env.PATH ?? '' },
    })
    let output = ''
    child.stderr.on('data', (chunk) => (output += chunk))
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
          output += chunk
          if (/svc listening on /.test(output)) resolve()
        })
        child.once('exit', (code) => reject(new Error(`svc demo exited (${code}): ${output}`)))
      })
      const listening = /svc listening on (http:\/\/\S+)/.exec(output)?.[1] as string
      expect(output).toMatch(/Questionnaires: 12 of the curated set held\./)
      expect(output).toMatch(/Plan Benefits: 14 ACA plans of 2025 and 3 Medicare Advantage plans of 2027/)
      const key = /\n {2}(svc_sk_\S+)\n/.exec(output)?.[1] as string
      const urls = [...output.matchAll(/'?(http:\/\/[^\s']+)'?$/gm)].map((match) => match[1] as string)
      const tried = urls.filter((url) => url.includes('/v1/'))
      expect(tried.length).toBeGreaterThanOrEqual(6)
      for (const url of tried) {
        expect(url.startsWith(listening), url).toBe(true)
        const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
        expect(response.status, url).toBe(200)
      }
    } finally {
      child.kill('SIGTERM')
    }
  }, 120_000)
})
