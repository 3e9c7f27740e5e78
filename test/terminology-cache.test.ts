import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../src/app/store.js'
import { addPublisher, removePublisher } from '../src/scheduling/publishers.js'
import {
  importTerminology,
  readTerminology,
  writeTerminology,
} from '../src/terminology/import/importFiles.js'
import { releasesUnchanged } from '../src/terminology/store.js'
import { runCli } from './support/cli.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'
import { NUCC_CSV } from './support/fixtures.js'

const NUCC = 'http://nucc.org/provider-taxonomy'
const BASE = '/v1/fhir/r4'
const ALLERGY = '207K00000X'
const SINGLE_SPECIALTY = '193400000X'
const ADDED = '999900000X'

let t: TestServer
let files: string
beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await importTerminology(t.server.db, [NUCC_CSV], { release: '25.0', now: t.now() })
  files = mkdtempSync(join(tmpdir(), 'svc-nucc-'))
})
afterAll(async () => {
  await t.close()
  rmSync(files, { recursive: true, force: true })
})

type Parameter = { name: string; [key: string]: unknown }
const lookup = async (code: string, version?: string) => {
  const response = await t.get(
    `${BASE}/CodeSystem/$lookup?system=${NUCC}&code=${code}${version ? `&version=${version}` : ''}`,
    bearer(t.key),
  )
  const parameters = (response.json?.parameter ?? []) as Parameter[]
  const valueOf = (name: string) => {
    const found = parameters.find((p) => p.name === name)
    return found && Object.entries(found).find(([key]) => key.startsWith('value'))?.[1]
  }
  return { status: response.status, version: valueOf('version'), display: valueOf('display') }
}

/** The fixture as a next release: one display renamed, one code dropped for a new one. */
function nextRelease(): string {
  const text = readFileSync(NUCC_CSV, 'utf8')
    .replace('Allergy & Immunology Physician', 'Allergist-Immunologist')
    .replace(`${SINGLE_SPECIALTY},`, `${ADDED},`)
    .replace('Single Specialty Group', 'Next Release Group')
  const path = join(files, 'nucc-next.csv')
  writeFileSync(path, text)
  return path
}

describe('terminology answers remembered in memory', () => {
  it('follow a release imported by another process from the next request, lone and in a batch', async () => {
    // Asked (and remembered) before the import: the latest release, a release not yet held, a code not yet in it.
    expect(await lookup(ALLERGY)).toMatchObject({
      status: 200,
      version: '25.0',
      display: 'Allergy & Immunology Physician',
    })
    expect((await lookup(ALLERGY, '25.1')).status).toBe(404)
    expect((await lookup(ADDED)).status).toBe(404)
    expect((await lookup(SINGLE_SPECIALTY)).status).toBe(200)

    const imported = await runCli(['import', 'terminology', nextRelease(), '--release', '25.1'], {
      SVC_DB: t.dbPath,
    })
    expect(imported.stderr).toBe('')
    expect(imported.code).toBe(0)

    expect(await lookup(ALLERGY)).toMatchObject({
      status: 200,
      version: '25.1',
      display: 'Allergist-Immunologist',
    })
    expect(await lookup(ALLERGY, '25.1')).toMatchObject({ status: 200, display: 'Allergist-Immunologist' })
    expect(await lookup(ALLERGY, '25.0')).toMatchObject({
      status: 200,
      display: 'Allergy & Immunology Physician',
    })
    expect(await lookup(ADDED)).toMatchObject({ status: 200, display: 'Next Release Group' })
    expect((await lookup(SINGLE_SPECIALTY)).status).toBe(404)

    const batch = await t.send('POST', BASE, {
      headers: { ...bearer(t.key), 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Bundle',
        type: 'batch',
        entry: [ALLERGY, SINGLE_SPECIALTY].map((code) => ({
          request: { method: 'GET', url: `CodeSystem/$lookup?system=${NUCC}&code=${code}` },
        })),
      }),
    })
    expect(batch.json.entry.map((e: { response: { status: string } }) => e.response.status)).toEqual([
      '200 OK',
      '404 Not Found',
    ])
    expect(batch.json.entry[0].resource.parameter).toContainEqual({ name: 'version', valueString: '25.1' })
  })

  it('follow a release replaced in place under the same version', async () => {
    const replaced = join(files, 'nucc-replaced.csv')
    writeFileSync(
      replaced,
      readFileSync(NUCC_CSV, 'utf8').replace('Allergy & Immunology Physician', 'Allergy Specialist'),
    )
    expect((await lookup(ALLERGY, '25.0')).display).toBe('Allergy & Immunology Physician')
    const imported = await runCli(['import', 'terminology', replaced, '--release', '25.0'], {
      SVC_DB: t.dbPath,
    })
    expect(imported.code).toBe(0)
    expect(await lookup(ALLERGY, '25.0')).toMatchObject({ status: 200, display: 'Allergy Specialist' })
  })
})

describe('kept terminology answers', () => {
  it('are judged still true after another domain changes, and not once a release comes or goes', async () => {
    const unchanged = releasesUnchanged(t.server.db)
    addPublisher(t.server.db, { slug: 'elsewhere', manifestUrl: join(files, 'none') })
    removePublisher(t.server.db, 'elsewhere')
    expect(unchanged()).toBe(true)
    await importTerminology(t.server.db, [NUCC_CSV], { release: '25.9', now: t.now() })
    expect(unchanged()).toBe(false)
  })
})

describe('changeGeneration', () => {
  it('moves at once on a commit of its own connection, and from the next turn on another’s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-changes-'))
    const serving = openStore({ db: join(dir, 'svc.db') })
    const other = openStore({ db: join(dir, 'svc.db') })
    try {
      const start = serving.db.changeGeneration()
      expect(serving.db.changeGeneration()).toBe(start)
      await importTerminology(serving.db, [NUCC_CSV], { release: 'own', now: 1 })
      const afterOwn = serving.db.changeGeneration()
      expect(afterOwn).not.toBe(start)

      // Read first: the commit below must land within one turn, as another process's would.
      const read = await readTerminology([NUCC_CSV], { release: 'other' })
      await nextTurn()
      expect(serving.db.changeGeneration()).toBe(afterOwn)
      writeTerminology(other.db, read, 2)
      // Work already under way in this turn answers as it would have just before the other commit.
      expect(serving.db.changeGeneration()).toBe(afterOwn)
      await nextTurn()
      expect(serving.db.changeGeneration()).not.toBe(afterOwn)
    } finally {
      other.close()
      serving.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
