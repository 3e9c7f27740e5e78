import { once } from 'node:events'
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { oneLine, runCli, runCliJson, startServeProcess } from './support/cli.js'
import { STU1_SLOTS, writeStu1Feed } from './support/stu1Feed.js'

let dir: string
let env: Record<string, string>

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sched-cli-'))
  writeStu1Feed(join(dir, 'feed'))
  env = { SVC_DB: join(dir, 'svc.db') }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('svc import publishers', () => {
  it('syncs from disk, lists each bad record with file and line, and summarises', async () => {
    await runCliJson(['publishers', 'add', 'stu1', '--manifest', join(dir, 'feed', '$bulk-publish')], env)
    const result = await runCli(['import', 'publishers'], env)
    expect(result.code).toBe(0)
    // oclif wraps warnings to the terminal width; read them as one line each.
    const warnings = oneLine(result.stderr)
    expect(warnings).toContain(`${join(dir, 'feed', 'slots.ndjson')}:7: not valid JSON`)
    expect(warnings).toMatch(/slots\.ndjson:13: Slot x1 names an unknown Schedule\/sch-missing/)
    expect(result.stdout).toMatch(/stu1\s+synced\s+25\s+11\s+2\s/)
  })

  it('reports a failed publisher with exit code 1 and keeps its data', async () => {
    await runCliJson(
      ['publishers', 'add', 'broken', '--manifest', join(dir, 'nowhere', '$bulk-publish')],
      env,
    )
    const result = await runCli(['import', 'publishers', '--publisher', 'broken'], env)
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/broken\s+failed.*cannot read manifest/)
    const [report] = await runCliJson(['import', 'publishers', '--publisher', 'stu1'], env)
    expect(report).toMatchObject({ outcome: 'skipped' }) // fetched less than a minute ago
  })

  it('stores a relative manifest path as an absolute one, so a sync started elsewhere finds it', async () => {
    const added = await runCliJson(['publishers', 'add', 'relative', '--manifest', 'feed/$bulk-publish'], env)
    // The CLI runs in the test's working directory: the path resolves against it.
    expect(added.manifestUrl).toBe(join(process.cwd(), 'feed', '$bulk-publish'))
    await runCliJson(['publishers', 'remove', 'relative'], env)
  })

  it('refuses a manifest URL of a scheme it cannot fetch, rather than take it for a relative path', async () => {
    for (const manifest of ['ftp://feeds.example.org/$bulk-publish', 'https://', 'gopher://x']) {
      const result = await runCli(['publishers', 'add', 'odd', '--manifest', manifest], env)
      expect(result.code).toBe(2)
      expect(oneLine(result.stderr)).toContain(`Invalid manifest "${manifest}"`)
    }
    const list = await runCliJson<{ slug: string }[]>(['publishers', 'list'], env)
    expect(list.map((publisher) => publisher.slug)).not.toContain('odd')
  })

  it('removes a publisher and its slots in one step', async () => {
    await runCliJson(['publishers', 'remove', 'broken'], env)
    const list = await runCliJson<{ slug: string }[]>(['publishers', 'list'], env)
    expect(list.map((publisher) => publisher.slug)).toEqual(['stu1'])
  })
})

describe('svc serve --sync-interval', () => {
  it('refuses a duration it cannot read, naming the setting', async () => {
    const result = await runCli(['serve', '--sync-interval', 'soon'], env)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('Invalid setting sync-interval')
  })

  it('syncs enabled publishers in the background, in a child process', async () => {
    const db = join(dir, 'background.db')
    await runCliJson(['publishers', 'add', 'stu1', '--manifest', join(dir, 'feed', '$bulk-publish')], {
      SVC_DB: db,
    })
    const { key } = await runCliJson<{ key: string }>(['keys', 'create', '--org', 'ops'], {
      SVC_DB: db,
    }).catch(async () => {
      await runCliJson(['orgs', 'create', 'ops', '--plan', 'scale'], { SVC_DB: db })
      return runCliJson<{ key: string }>(['keys', 'create', '--org', 'ops'], { SVC_DB: db })
    })
    const serve = await startServeProcess({ SVC_DB: db }, ['--sync-interval', '1h'])
    try {
      // The first sync starts with the server; wait for its slots to be served (bounded by the test timeout).
      let total = 0
      while (total === 0) {
        const response = await request(`${serve.url}/v1/scheduling/slots?includePast=true`, {
          headers: { authorization: `Bearer ${key}` },
        })
        total = ((await response.body.json()) as { total: number }).total
      }
      expect(total).toBe(9)
    } finally {
      await serve.stop()
    }
  })

  it('says that a sync it stops as it stops was stopped, not that it failed', async () => {
    // A publisher whose manifest never comes: the first sync is still waiting for it when the server stops.
    const hanging = createServer(() => undefined)
    hanging.listen(0, '127.0.0.1')
    await once(hanging, 'listening')
    const asked = once(hanging, 'request')
    const db = join(dir, 'stopped.db')
    const { port } = hanging.address() as AddressInfo
    await runCliJson(['publishers', 'add', 'slow', '--manifest', `http://127.0.0.1:${port}/$bulk-publish`], {
      SVC_DB: db,
    })
    const serve = await startServeProcess({ SVC_DB: db }, ['--sync-interval', '1h'])
    try {
      await asked
    } finally {
      await serve.stop()
      hanging.closeAllConnections()
      hanging.close()
    }
    expect(serve.output()).toContain('publisher sync stopped with the server')
    expect(serve.output()).not.toContain('publisher sync exited')
  })

  it('runs the background sync with the configuration file svc serve was given', async () => {
    const feed = join(dir, 'feed-with-large-slot')
    writeStu1Feed(feed)
    // A 1.5 MB slot line: past the configured limit of one record (1 MB), within the default one (64 MB).
    const large = { ...STU1_SLOTS[2], id: 'large', comment: 'x'.repeat(1_500_000) }
    appendFileSync(join(feed, 'slots.ndjson'), `${JSON.stringify(large)}\n`)
    const configFile = join(dir, 'limits.json')
    writeFileSync(configFile, JSON.stringify({ importMaxRecordMb: 1 }))
    const db = join(dir, 'configured.db')
    await runCliJson(['publishers', 'add', 'stu1', '--manifest', join(feed, '$bulk-publish')], { SVC_DB: db })
    const serve = await startServeProcess({ SVC_DB: db }, ['--config', configFile, '--sync-interval', '1h'])
    let outcome: { outcome: string; skipped: number; written: number } | undefined
    try {
      const store = new Database(db, { readonly: true })
      try {
        // The first sync starts with the server; wait for its outcome (bounded by the test timeout).
        while (!outcome) {
          const recorded = store.prepare('SELECT last_sync FROM publishers').pluck().get() as string | null
          if (recorded) outcome = JSON.parse(recorded)
          else await new Promise((resolve) => setTimeout(resolve, 50))
        }
      } finally {
        store.close()
      }
    } finally {
      await serve.stop()
    }
    // The broken line, the unknown schedule, and the slot over the configured limit.
    expect(outcome).toMatchObject({ outcome: 'synced', written: 11, skipped: 3 })
  })
})
