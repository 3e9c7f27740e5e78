import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { appliedSteps } from '../src/db/migrate.js'
import { allSteps } from './support/legacyStore.js'
import { importDirectory } from '../src/directory/importer.js'
import { ImportError } from '../src/fhir/store/releaseBuild.js'
import { releaseFileName } from '../src/directory/releases.js'
import { resolveSources } from '../src/ingest/sources.js'
import { runCli } from './support/cli.js'
import { fixture, PLAN_NET } from './support/directory.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/** The main file of a store made by the version before release files (user_version 31): Organization,
 * Endpoint and OrganizationAffiliation of Plan-Net imported by that version's `svc import directory`. */
const PREVIOUS_VERSION = fileURLToPath(
  new URL('./fixtures/directory/previous-version.db.gz', import.meta.url),
)
const BASE = '/v1/fhir/r4'

/** An endpoint search that stands alone, and how many of the fixture's endpoints it matches. */
const endpoint = fixture('Endpoint')[0]
const ENDPOINTS_OF_ORG = `Endpoint?organization=${endpoint.managingOrganization.reference.split('/').pop()}`
const endpointsOfOrg = fixture('Endpoint').filter(
  (candidate) => candidate.managingOrganization?.reference === endpoint.managingOrganization.reference,
).length

let t: TestServer | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

const releaseFiles = (server: TestServer) =>
  readdirSync(server.dir)
    .filter((name) => /\.directory-\d+\.db$/.test(name))
    .sort()

const total = async (server: TestServer, query: string) =>
  (await server.get(`${BASE}/${query}&_summary=count`, bearer(server.key))).json.total as number
const entries = async (server: TestServer, query: string) =>
  ((await server.get(`${BASE}/${query}`, bearer(server.key))).json.entry ?? []) as { resource: any }[]

describe('directory releases, each in a file of its own', () => {
  it('a running server answers from each release another process imports, with no restart', async () => {
    const server = await startTestServer({ plan: 'scale' })
    t = server
    const cli = (...inputs: string[]) =>
      runCli(['import', 'directory', ...inputs, '--db', server.dbPath, '--json']).then((result) => {
        expect(result.code, result.stderr).toBe(0)
        return JSON.parse(result.stdout).release as number
      })

    const first = await cli(join(PLAN_NET, 'Endpoint.ndjson'))
    expect(await total(server, ENDPOINTS_OF_ORG)).toBe(endpointsOfOrg)
    expect(await entries(server, 'Practitioner?name=a')).toEqual([])
    expect(releaseFiles(server)).toEqual([releaseFileName(server.dbPath, first)])

    // The server has the first release's file attached when the second replaces it and removes it.
    const second = await cli(PLAN_NET)
    const practitioners = await entries(server, 'Practitioner?name=a&_count=100')
    expect(practitioners.length).toBeGreaterThan(0)
    expect(
      (await server.get(`${BASE}/Organization/${fixture('Organization')[0].id}`, bearer(server.key))).json,
    ).toEqual(fixture('Organization')[0])
    expect(releaseFiles(server)).toEqual([releaseFileName(server.dbPath, second)])

    await cli(join(PLAN_NET, 'Endpoint.ndjson'))
    expect(await entries(server, 'Practitioner?name=a')).toEqual([])
    expect(
      (await server.get(`${BASE}/Practitioner/${practitioners[0]?.resource.id}`, bearer(server.key))).status,
    ).toBe(404)
  })

  it('upgrades a store made by the previous version in place: its release serves until an import replaces it', async () => {
    const server = await startTestServer({
      plan: 'scale',
      prepare: (path) => writeFileSync(path, gunzipSync(readFileSync(PREVIOUS_VERSION))),
    })
    t = server
    const db = server.server.db
    expect([...appliedSteps(db)].sort()).toEqual([...allSteps('main')].sort())
    expect(db.prepare('SELECT id, state, file FROM directory_releases').all()).toEqual([
      { id: 1, state: 'active', file: null },
    ])

    const network = 'plannet-network-HPID010000'
    const members = fixture('OrganizationAffiliation').filter((affiliation) =>
      affiliation.network?.some((ref: any) => ref.reference === `Organization/${network}`),
    )
    expect(members.length).toBeGreaterThan(0)
    expect(await total(server, `OrganizationAffiliation?network=${network}`)).toBe(members.length)
    const organization = fixture('Organization')[0]
    expect((await server.get(`${BASE}/Organization/${organization.id}`, bearer(server.key))).json).toEqual(
      organization,
    )
    const named = await entries(server, `Organization?name=${encodeURIComponent(organization.name)}`)
    expect(named.map((entry) => entry.resource.id)).toContain(organization.id)

    await importDirectory(db, await resolveSources([PLAN_NET]))
    const mainTables = db
      .prepare("SELECT name FROM main.sqlite_schema WHERE name LIKE 'dir\\_%' ESCAPE '\\'")
      .pluck()
      .all()
    expect(mainTables).toEqual([])
    expect(await total(server, `OrganizationAffiliation?network=${network}`)).toBe(members.length)
    expect((await entries(server, 'Practitioner?name=a')).length).toBeGreaterThan(0)
    expect(releaseFiles(server)).toEqual([releaseFileName(server.dbPath, 2)])
  })

  it('clears what a dead import left (its release failed, its file gone) and leaves a running one alone', async () => {
    const server = await startTestServer({ plan: 'scale' })
    t = server
    const db = server.server.db
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number
    const loading = (pid: number) => {
      const id = Number(
        db
          .prepare(
            "INSERT INTO directory_releases (state, pid, started_at, sources) VALUES ('loading', ?, '2026-11-01', '[]')",
          )
          .run(pid).lastInsertRowid,
      )
      const file = releaseFileName(server.dbPath, id)
      db.prepare('UPDATE directory_releases SET file = ? WHERE id = ?').run(file, id)
      writeFileSync(join(server.dir, file), 'half a release')
      return { id, file }
    }
    const crashed = loading(dead)
    const running = loading(process.ppid)

    const summary = await importDirectory(db, await resolveSources([join(PLAN_NET, 'Endpoint.ndjson')]))
    const state = db.prepare('SELECT state FROM directory_releases WHERE id = ?').pluck()
    expect(state.get(crashed.id)).toBe('failed')
    expect(existsSync(join(server.dir, crashed.file))).toBe(false)
    expect(state.get(running.id)).toBe('loading')
    expect(releaseFiles(server)).toEqual(
      [running.file, releaseFileName(server.dbPath, summary.release)].sort(),
    )
  })

  it('a release whose file went missing is a 503, never an empty answer, until an import replaces it', async () => {
    const server = await startTestServer({ plan: 'scale' })
    t = server
    const summary = await importDirectory(
      server.server.db,
      await resolveSources([join(PLAN_NET, 'Endpoint.ndjson')]),
    )
    const file = join(server.dir, releaseFileName(server.dbPath, summary.release))
    rmSync(file)
    const answer = await server.get(`${BASE}/${ENDPOINTS_OF_ORG}`, bearer(server.key))
    expect(answer.status).toBe(503)
    expect(answer.headers['retry-after']).toBeDefined()
    expect(existsSync(file)).toBe(false)

    await importDirectory(server.server.db, await resolveSources([join(PLAN_NET, 'Endpoint.ndjson')]))
    expect(await total(server, ENDPOINTS_OF_ORG)).toBe(endpointsOfOrg)
  })

  it('keeps the previous release when the new one cannot go live, and removes the new file', async () => {
    const server = await startTestServer({ plan: 'scale', busyTimeoutMs: 100 })
    t = server
    const db = server.server.db
    const before = await importDirectory(db, await resolveSources([join(PLAN_NET, 'Endpoint.ndjson')]))
    const other = new Database(server.dbPath)
    try {
      // Another process takes the main file's write lock while the release is being built.
      const failed = importDirectory(db, await resolveSources([PLAN_NET]), {
        onProgress: () => {
          if (!other.inTransaction) other.exec('BEGIN IMMEDIATE')
        },
      })
      await expect(failed).rejects.toThrow(ImportError)
      await expect(failed).rejects.toThrow(/locked|busy/i)
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK')
      other.close()
    }
    expect(releaseFiles(server)).toEqual([releaseFileName(server.dbPath, before.release)])
    expect(await total(server, ENDPOINTS_OF_ORG)).toBe(endpointsOfOrg)
    expect(await entries(server, 'Practitioner?name=a')).toEqual([])

    const next = await importDirectory(db, await resolveSources([join(PLAN_NET, 'Endpoint.ndjson')]))
    const states = db.prepare('SELECT id, state FROM directory_releases ORDER BY id').all()
    expect(states).toEqual([
      { id: before.release, state: 'replaced' },
      { id: before.release + 1, state: 'failed' },
      { id: next.release, state: 'active' },
    ])
  })
})
