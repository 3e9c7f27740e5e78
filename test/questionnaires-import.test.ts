import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import { importQuestionnaires } from '../src/questionnaires/importQuestionnaires.js'
import { runCli } from './support/cli.js'
import { json, startFakeUpstream } from './support/fakeUpstream.js'
import { bearer, startTestServer } from './support/harness.js'

/** `svc import questionnaires` and `svc questionnaires list / refresh` as a user runs them. */

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-questionnaires-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let stores = 0
const freshDb = () => {
  const folder = join(dir, `store-${++stores}`)
  mkdirSync(folder)
  return join(folder, 'svc.db')
}

const form = (id: string, extra: Record<string, unknown> = {}) => ({
  resourceType: 'Questionnaire',
  id,
  url: `https://forms.example.org/Questionnaire/${id}`,
  status: 'active',
  item: [{ linkId: '1', type: 'string', text: 'Name' }],
  ...extra,
})

describe('svc import questionnaires', () => {
  it('imports JSON, Bundles and NDJSON; lists each refused record with its file and line; exits 1', async () => {
    const db = freshDb()
    const ndjson = join(dir, 'forms.ndjson')
    writeFileSync(
      ndjson,
      [
        JSON.stringify(form('a')),
        JSON.stringify({ resourceType: 'Patient', id: 'p' }),
        JSON.stringify(form('b', { status: undefined })),
        '{"resourceType": "Questionnaire", broken',
        JSON.stringify(
          form('c', {
            item: [
              { linkId: 'x', type: 'string' },
              { linkId: 'x', type: 'string' },
            ],
          }),
        ),
        '',
        JSON.stringify(form('d', { item: [{ linkId: 'y', type: 'essay' }] })),
      ].join('\n'),
    )
    const bundle = join(dir, 'bundle.json')
    writeFileSync(
      bundle,
      JSON.stringify(
        {
          resourceType: 'Bundle',
          type: 'collection',
          entry: [{ resource: form('e') }, { resource: { resourceType: 'Questionnaire', id: 'f' } }],
        },
        null,
        2,
      ),
    )
    const single = join(dir, 'single.json')
    writeFileSync(single, JSON.stringify(form('g'), null, 2))
    const result = await runCli(['import', 'questionnaires', ndjson, bundle, single, '--db', db])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${ndjson}:2: not a Questionnaire (resourceType "Patient")`)
    expect(result.stderr).toContain(`${ndjson}:3: has no status`)
    expect(result.stderr).toMatch(new RegExp(`${ndjson}:4: not R4 JSON: not valid JSON`))
    expect(result.stderr).toContain(`${ndjson}:5: linkId "x" is used more than once`)
    expect(result.stderr).toContain(`${ndjson}:7: not R4 JSON: item[0] type "essay" is not an R4 item type`)
    // The second entry of the pretty-printed Bundle opens on its own line.
    expect(result.stderr).toMatch(new RegExp(`${bundle}:\\d+: has no status`))
    expect(result.stderr).not.toContain(`${bundle}:1:`)
    expect(result.stdout).toMatch(/forms\.ndjson\s+6\s+1\s+0\s+5/)
    expect(result.stdout).toMatch(/bundle\.json\s+2\s+1\s+0\s+1/)
    expect(result.stdout).toMatch(/3 Questionnaires held; 6 refused/)

    const listed = await runCli(['questionnaires', 'list', '--db', db, '--json'])
    const held = JSON.parse(listed.stdout) as { id: string; origin: string; source: string }[]
    expect(held.filter((row) => row.origin === 'curated')).toHaveLength(12)
    expect(
      held
        .filter((row) => row.origin === 'file')
        .map((row) => row.id)
        .sort(),
    ).toEqual(['a', 'e', 'g'])
  })

  it('writes nothing when a source cannot be read: a missing file, a JSON file that is not JSON, a failed download', async () => {
    const db = freshDb()
    const good = join(dir, 'good.json')
    writeFileSync(good, JSON.stringify(form('good')))
    const broken = join(dir, 'broken.json')
    writeFileSync(broken, '{"resourceType": "Questionnaire",')
    const fake = await startFakeUpstream()
    try {
      for (const bad of [join(dir, 'missing.json'), broken, `${fake.base}/forms.json`]) {
        fake.script(json(500, {}))
        const result = await runCli(['import', 'questionnaires', good, bad, '--db', db])
        expect(result.code, bad).toBe(2)
        const listed = JSON.parse((await runCli(['questionnaires', 'list', '--db', db, '--json'])).stdout)
        expect(
          listed.some((row: any) => row.id === 'good'),
          bad,
        ).toBe(false)
      }
      // An address that answers is imported, and listed as one.
      fake.reset()
      fake.script(json(200, form('remote')))
      const imported = await runCli(['import', 'questionnaires', `${fake.base}/remote.json`, '--db', db])
      expect(imported.code).toBe(0)
      const listed = JSON.parse((await runCli(['questionnaires', 'list', '--db', db, '--json'])).stdout)
      expect(listed.find((row: any) => row.id === 'remote').origin).toBe('address')
    } finally {
      await fake.close()
    }
  })

  it('keeps what was held when the store has no room: the disk says so, nothing half imported', async () => {
    const db = openDatabase(freshDb())
    try {
      const held = () => db.prepare('SELECT count(*) FROM questionnaire_held').pluck().get()
      const before = held()
      const forms = join(dir, 'roomless.ndjson')
      const text = 'A question worded at length. '.repeat(200)
      writeFileSync(
        forms,
        Array.from({ length: 400 }, (_, n) =>
          JSON.stringify(form(`long-${n}`, { item: [{ linkId: '1', type: 'string', text }] })),
        ).join('\n'),
      )
      // The file may not grow: what a full disk does to an import, on any machine.
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`)
      await expect(importQuestionnaires(db, [forms])).rejects.toThrow(/database or disk is full/)
      expect(db.inTransaction).toBe(false)
      expect(held()).toBe(before)
    } finally {
      db.close()
    }
  })

  it('refreshes fetched copies: a 304 keeps them; a failed source is named and exits 1', async () => {
    const fake = await startFakeUpstream()
    const prefix = `${fake.base.replace(/\/fhir$/, '')}/forms/`
    const env = { SVC_QUESTIONNAIRE_SOURCES: prefix }
    const t = await startTestServer({ plan: 'scale', env, upstream: { sleep: async () => undefined } })
    try {
      const canonical = `${prefix}Questionnaire/kept`
      fake.script(json(200, { ...form('kept'), url: canonical }, { etag: '"1"' }))
      const search = await t.get(
        `/v1/fhir/r4/Questionnaire?url=${encodeURIComponent(canonical)}`,
        bearer(t.key),
      )
      expect(search.json.total).toBe(1)

      fake.reset()
      fake.script((req, res) => res.writeHead(req.headers['if-none-match'] === '"1"' ? 304 : 200).end())
      const unchanged = await runCli(['questionnaires', 'refresh', '--db', t.dbPath], env)
      expect(unchanged.code).toBe(0)
      expect(unchanged.stdout).toMatch(/Questionnaire\/kept\s+unchanged/)
      const listed = JSON.parse(
        (await runCli(['questionnaires', 'list', '--fetched', '--db', t.dbPath, '--json'], env)).stdout,
      )
      expect(listed.map((row: any) => [row.id, row.origin])).toEqual([['kept', 'fetched']])

      fake.reset()
      fake.script(json(500, {}), json(500, {}))
      const failed = await runCli(['questionnaires', 'refresh', '--db', t.dbPath], env)
      expect(failed.code).toBe(1)
      expect(failed.stdout).toMatch(/failed: The questionnaire source answered 500/)
    } finally {
      await t.close()
      await fake.close()
    }
  })
})
