import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { createKey } from '../../src/accounts/keys.js'
import { createOrganization } from '../../src/accounts/orgs.js'
import { resolveAppConfig } from '../../src/app/config.js'
import type { UpstreamTuning } from '../../src/upstream/client.js'
import { type RunningServer, startServer } from '../../src/app/server.js'

export interface TestServer {
  url: string
  dbPath: string
  dir: string
  server: RunningServer
  /** A key of organization `acme`. */
  key: string
  /** The injected clock: read and move it. */
  now(): number
  setNow(iso: string | number): void
  get(path: string, headers?: Record<string, string>): Promise<TestResponse>
  /** POSTs FHIR JSON (an object, or text sent as is) with the `acme` key; `headers` add to or replace those. */
  postFhir(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>
  send(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: string | Buffer },
  ): Promise<TestResponse>
  close(): Promise<void>
}

export interface TestResponse {
  status: number
  headers: Record<string, string>
  text: string
  json: any
}

export const DEFAULT_NOW = '2026-11-21T10:00:30.000Z'

/** A real server on a loopback port over a fresh SQLite file in a temp dir, with an injected clock. */
export async function startTestServer(
  options: {
    plan?: string
    now?: string
    env?: NodeJS.ProcessEnv
    busyTimeoutMs?: number
    upstream?: UpstreamTuning
    batchBudgetMs?: number
    bodyTimeoutMs?: number
    /** Puts a database file at the path before the server opens it (one made by an earlier version, say). */
    prepare?: (dbPath: string) => void
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'))
  const dbPath = join(dir, 'svc.db')
  options.prepare?.(dbPath)
  const config = await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, options.env ?? {})
  let now = Date.parse(options.now ?? DEFAULT_NOW)
  const server = await startServer(config, () => now, {
    requestLogFlushMs: 20,
    busyTimeoutMs: options.busyTimeoutMs,
    upstream: options.upstream,
    batchBudgetMs: options.batchBudgetMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
  })
  createOrganization(server.db, { slug: 'acme', name: 'Acme', plan: options.plan ?? 'developer' })
  const { key } = createKey(server.db, { org: 'acme' })

  const send: TestServer['send'] = async (method, path, init = {}) => {
    const response = await request(`${server.url}${path}`, {
      method: method as 'GET',
      headers: init.headers,
      body: init.body,
    })
    const text = await response.body.text()
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(response.headers))
      headers[name] = Array.isArray(value) ? value.join(', ') : String(value)
    return { status: response.statusCode, headers, text, json }
  }

  return {
    url: server.url,
    dbPath,
    dir,
    server,
    key,
    now: () => now,
    setNow(value) {
      now = typeof value === 'number' ? value : Date.parse(value)
    },
    get: (path, headers = {}) => send('GET', path, { headers }),
    postFhir: (path, body, headers = {}) =>
      send('POST', path, {
        headers: { ...bearer(key), 'content-type': 'application/fhir+json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    send,
    async close() {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
