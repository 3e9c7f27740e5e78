import { once } from 'node:events'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { Readable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIRECTORY_LAYOUT } from '../src/directory/declaration.js'
import { importDirectory } from '../src/directory/importer.js'
import { ImportError } from '../src/fhir/store/releaseBuild.js'
import { textTableKey } from '../src/fhir/store/schema.js'
import { releaseFileName } from '../src/directory/releases.js'
import { linesOf } from '../src/ingest/lines.js'
import { resolveSources } from '../src/ingest/sources.js'
import { runCli } from './support/cli.js'
import { fixture, PLAN_NET } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

const ZST = fileURLToPath(new URL('./fixtures/directory/Endpoint.ndjson.zst', import.meta.url))
const BASE = '/v1/fhir/r4'

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
})
afterAll(() => t.close())

const get = (path: string) => t.get(`${BASE}/${path}`, bearer(t.key))
const importInto = async (inputs: string[]) => importDirectory(t.server.db, await resolveSources(inputs))
const releaseFiles = () => readdirSync(t.dir).filter((name) => /\.directory-\d+\.db/.test(name))
const activeFile = () =>
  releaseFileName(
    t.dbPath,
    t.server.db.prepare("SELECT id FROM directory_releases WHERE state = 'active'").pluck().get() as number,
  )

describe('svc import directory', () => {
  it('imports the Plan-Net release from the CLI with a summary per resource type', async () => {
    const result = await runCli(['import', 'directory', PLAN_NET, '--db', t.dbPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout)
    // InsurancePlans are held too (no endpoint of the directory's own): plans' $in-network meets them.
    for (const type of [
      'Practitioner',
      'PractitionerRole',
      'Organization',
      'Location',
      'Endpoint',
      'InsurancePlan',
    ]) {
      expect(summary.types[type]).toEqual({ imported: fixture(type).length, skipped: 0 })
    }
    expect(summary.ignored).toEqual({})
    const human = await runCli(['import', 'directory', join(PLAN_NET, 'Endpoint.ndjson'), '--db', t.dbPath])
    expect(human.stdout).toMatch(/Endpoint\s+40\s+0/)
    expect(human.stdout).toMatch(/Release \d+ is live: 40 resources/)
    const missing = await runCli(['import', 'directory', join(t.dir, 'nope.ndjson'), '--db', t.dbPath])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/nope\.ndjson: no such file/)
  })

  it('reads gzip, zstd and JSON Bundles, and reports each bad line with file and line', async () => {
    const lines = readFileSync(join(PLAN_NET, 'Practitioner.ndjson'), 'utf8').trim().split('\n').slice(0, 5)
    const duplicate = lines[1] as string
    const body = [
      lines[0],
      '{not json',
      lines[1],
      '',
      '{"resourceType":"Practitioner","id":"bad id!"}',
      duplicate,
      '[1]',
      lines[2],
    ]
    const gz = join(t.dir, 'Practitioner.ndjson.gz')
    writeFileSync(gz, gzipSync(`${body.join('\r\n')}\n`))
    const bundle = join(t.dir, 'orgs.json')
    const orgs = fixture('Organization').slice(0, 2)
    writeFileSync(
      bundle,
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'collection',
        entry: [...orgs.map((resource) => ({ resource })), {}],
      }),
    )
    const summary = await importInto([gz, ZST, bundle])
    expect(summary.types.Practitioner).toEqual({ imported: 3, skipped: 1 })
    expect(summary.types.Endpoint.imported).toBe(fixture('Endpoint').length)
    expect(summary.types.Organization.imported).toBe(2)
    expect(summary.problems.map((p) => [p.source, p.line, p.message.split(' ')[0]])).toEqual([
      [gz, 2, 'not'],
      [gz, 5, 'Practitioner.id'],
      [gz, 6, 'duplicate'],
      [gz, 7, 'not'],
      [bundle, 3, 'Bundle'],
    ])
    expect((await get(`Organization/${orgs[0].id}`)).json).toEqual(orgs[0])
    expect((await get(`Practitioner/${JSON.parse(lines[2] as string).id}`)).status).toBe(200)
    // The duplicate left no search rows behind: its practitioner is found once by NPI and once by name.
    const kept = JSON.parse(duplicate)
    const byNpi = await get(`Practitioner?identifier=${kept.identifier[0].value}`)
    expect(byNpi.json.entry.map((entry: any) => entry.resource)).toEqual([kept])
    const byName = await get(`Practitioner?family=${encodeURIComponent(kept.name[0].family)}&_count=100`)
    expect(byName.json.entry.filter((entry: any) => entry.resource.id === kept.id)).toHaveLength(1)
  })

  it('replaces the previous release whole, and a cursor of the old release no longer pages', async () => {
    await importInto([PLAN_NET])
    const first = await get('Practitioner?name=a&_count=2')
    const nextUrl = first.json.link.find((l: any) => l.relation === 'next').url as string
    const summary = await importInto([join(PLAN_NET, 'Endpoint.ndjson')])
    expect(summary.imported).toBe(fixture('Endpoint').length)
    expect((await get('Practitioner?name=a')).json.entry).toEqual([])
    const stale = await t.get(nextUrl.replace(t.url, ''), bearer(t.key))
    expect(stale.status).toBe(400)
    expect(stale.json.issue[0].expression).toEqual(['page'])
  })

  it('keeps the previous release when a source fails midway, leaving no file of the failed one behind', async () => {
    await importInto([PLAN_NET])
    const before = (await get('OrganizationAffiliation?network=plannet-network-HPID010000&_summary=count'))
      .json.total
    const whole = gzipSync(readFileSync(join(PLAN_NET, 'Practitioner.ndjson')))
    const truncated = join(t.dir, 'truncated.ndjson.gz')
    writeFileSync(truncated, whole.subarray(0, whole.length / 2))
    copyFileSync(join(PLAN_NET, 'Endpoint.ndjson'), join(t.dir, 'Endpoint.ndjson'))
    await expect(importInto([join(t.dir, 'Endpoint.ndjson'), truncated])).rejects.toBeInstanceOf(ImportError)

    const server = createServer((_request, response) => {
      response.statusCode = 404
      response.end()
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/Practitioner.ndjson`
    await expect(importInto([join(t.dir, 'Endpoint.ndjson'), url])).rejects.toThrow(/answered HTTP 404/)
    server.close()
    await expect(importInto([join(t.dir, 'orgs.json'), join(t.dir, 'nothing.ndjson')])).rejects.toThrow(
      /no such file/,
    )

    expect(
      (await get('OrganizationAffiliation?network=plannet-network-HPID010000&_summary=count')).json.total,
    ).toBe(before)
    expect((await get('Practitioner?name=a')).json.entry.length).toBeGreaterThan(0)
    expect(releaseFiles()).toEqual([activeFile()])
    const states = t.server.db
      .prepare('SELECT state FROM directory_releases ORDER BY id DESC LIMIT 3')
      .pluck()
      .all()
    expect(states).toEqual(['failed', 'failed', 'active'])
  })

  it("writes the release in batches to a file of its own: same answers, and the main file's WAL stays small", async () => {
    const queries = [
      'Practitioner?name=a&_count=100',
      'Practitioner?family=sm',
      'OrganizationAffiliation?network=plannet-network-HPID010000&_count=100',
    ]
    await importInto([PLAN_NET])
    const whole = await Promise.all(queries.map(async (query) => (await get(query)).json.entry))
    t.server.db.pragma('wal_checkpoint(TRUNCATE)')
    const summary = await importDirectory(t.server.db, await resolveSources([PLAN_NET]), { batchSize: 50 })
    expect(summary.skipped).toBe(0)
    const batched = await Promise.all(queries.map(async (query) => (await get(query)).json.entry))
    expect(batched).toEqual(whole)
    expect(whole.map((entries) => entries.length)).toEqual([100, 4, 95])
    // The main file records the release; the resources (about 12 MB of them) went to the release file.
    const release = readdirSync(PLAN_NET).reduce(
      (bytes, name) => bytes + statSync(join(PLAN_NET, name)).size,
      0,
    )
    expect(statSync(`${t.dbPath}-wal`).size).toBeLessThan(release / 50)
    expect(statSync(join(t.dir, activeFile())).size).toBeGreaterThan(release / 2)
  })

  it('merges each full-text table into one segment once the rows are in: a name search looks in one', async () => {
    // Enough names that FTS5 writes its in-memory terms out several times during the load: each write is a
    // segment, which every word of a search is looked up in until they are merged.
    const input = mkdtempSync(join(t.dir, 'many-names-'))
    const [template] = fixture('Practitioner')
    const lines = Array.from({ length: 30_000 }, (_, i) =>
      JSON.stringify({
        ...template,
        id: `many-${i}`,
        identifier: [],
        name: [{ family: `Fam${i % 997}x`, given: [`Giv${i % 1009}y`, `Mid${i}z`] }],
      }),
    )
    writeFileSync(join(input, 'Practitioner.ndjson'), `${lines.join('\n')}\n`)
    await importInto([input])
    const release = new Database(join(t.dir, activeFile()), { readonly: true })
    const names = DIRECTORY_LAYOUT.textTables.get(textTableKey('Practitioner'))?.table
    expect(release.prepare(`SELECT count(DISTINCT segid) FROM ${names}_idx`).pluck().get()).toBe(1)
    release.close()
    const found = await get(`Practitioner?name=${encodeURIComponent('giv5y fam5')}`)
    const expected = Array.from({ length: 30_000 }, (_, i) => i)
      .filter((i) => i % 1009 === 5 && `fam${i % 997}x`.startsWith('fam5'))
      .map((i) => `many-${i}`)
    expect(expected.length).toBeGreaterThan(1)
    expect(found.json.entry.map((entry: any) => entry.resource.id)).toEqual(expected)
    const prefixed = await get('Practitioner?given=mid2999&_count=100')
    expect(prefixed.json.entry.map((entry: any) => entry.resource.id)).toEqual([
      'many-2999',
      ...Array.from({ length: 10 }, (_, k) => `many-${29_990 + k}`),
    ])
  })

  it('imports from http(s) URLs', async () => {
    const server = createServer((request, response) => {
      response.end(readFileSync(join(PLAN_NET, (request.url ?? '/').slice(1))))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const summary = await importInto([`${base}/Location.ndjson`, `${base}/Organization.ndjson`])
      expect(summary.types.Location.imported).toBe(fixture('Location').length)
      expect(summary.types.Organization.imported).toBe(fixture('Organization').length)
    } finally {
      server.close()
    }
  })
})

describe('linesOf', () => {
  it('gives every line with its number and exact bytes, however the stream is cut', async () => {
    const text = '\uFEFF{"a":1}\r\n\n{"b":"é ü"}\n  \r\n{"c":"' + 'x'.repeat(300) + '"}'
    const bytes = Buffer.from(text)
    const expected = [
      [1, '{"a":1}'],
      [2, ''],
      [3, '{"b":"é ü"}'],
      [4, '  '],
      [5, `{"c":"${'x'.repeat(300)}"}`],
    ]
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
        bytes.subarray(i * size, (i + 1) * size),
      )
      const lines: [number, string][] = []
      for await (const { first, data, bounds } of linesOf(Readable.from(chunks))) {
        for (let at = 0; at < bounds.length; at += 2)
          lines.push([first + at / 2, data.toString('utf8', bounds[at], bounds[at + 1])])
      }
      expect(lines, `chunks of ${size}`).toEqual(expected)
    }
  })
})
