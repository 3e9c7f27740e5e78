import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, runCli, runCliJson } from './support/cli.js'
import { NUCC_CSV } from './support/fixtures.js'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-term-import-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const file = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const codeSystem = (version: string | undefined, codes: string[]) => ({
  resourceType: 'CodeSystem',
  url: 'http://example.org/cs/colours',
  ...(version ? { version } : {}),
  status: 'active',
  content: 'complete',
  concept: codes.map((code) => ({ code, display: code.toUpperCase() })),
})
const codesIn = (db: string, url: string, version: string) => {
  const sqlite = new Database(db, { readonly: true })
  try {
    return sqlite
      .prepare(
        `SELECT c.code FROM term_concepts c JOIN term_code_systems s ON s.id = c.system_id
         WHERE s.url = ? AND s.version = ? ORDER BY c.seq`,
      )
      .pluck()
      .all(url, version) as string[]
  } finally {
    sqlite.close()
  }
}

describe('svc import terminology', () => {
  it('imports the NUCC taxonomy CSV at the named release', async () => {
    const db = join(dir, 'nucc.db')
    const summary = await runCliJson(['import', 'terminology', NUCC_CSV, '--release', '25.0', '--db', db])
    expect(summary.codeSystems).toEqual([
      { url: 'http://nucc.org/provider-taxonomy', version: '25.0', concepts: 874 },
    ])
    expect(summary.bad).toEqual([])
    expect(codesIn(db, 'http://nucc.org/provider-taxonomy', '25.0')).toHaveLength(874)
  })

  it('reports each bad record with file and line, and imports the rest', async () => {
    const db = join(dir, 'bad.db')
    const csv = file(
      'taxonomy.csv',
      [
        'Code,Grouping,Classification,Specialization,Definition,Notes,Display Name,Section',
        '207K00000X,Physicians,Allergy & Immunology,,"Multi-line',
        'definition",,Allergy Physician,Individual',
        'not-a-code,Physicians,Other,,,,Other,Individual',
        '207KA0200X,Physicians,Allergy & Immunology,Allergy',
        '207KI0005X,Physicians,Allergy & Immunology,Clinical & Laboratory Immunology,,,Immunology Physician,Individual',
      ].join('\n'),
    )
    const ndjson = file(
      'resources.ndjson',
      [
        JSON.stringify(codeSystem('1', ['red', 'green'])),
        '{"resourceType":',
        JSON.stringify({ resourceType: 'Observation' }),
      ].join('\n'),
    )
    const result = await runCli(['import', 'terminology', csv, ndjson, '--release', 'r1', '--db', db])
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(`${csv}:4: "not-a-code" is not a taxonomy code`)
    expect(result.stderr).toContain(`${csv}:5: expected 8 columns, got 4`)
    expect(result.stderr).toContain(`${ndjson}:2: not valid JSON`)
    expect(result.stderr).toContain(
      `${ndjson}:3: expected a CodeSystem or ValueSet resource, got Observation`,
    )
    expect(codesIn(db, 'http://nucc.org/provider-taxonomy', 'r1')).toEqual(['207K00000X', '207KI0005X'])
    expect(codesIn(db, 'http://example.org/cs/colours', '1')).toEqual(['red', 'green'])
  })

  it('replaces a re-imported release atomically and keeps other releases', async () => {
    const db = join(dir, 'replace.db')
    const bundle = (version: string, codes: string[]) =>
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'collection',
        entry: [
          { resource: codeSystem(version, codes) },
          {
            resource: {
              resourceType: 'ValueSet',
              url: 'http://example.org/vs/colours',
              version,
              status: 'active',
              compose: { include: [{ system: 'http://example.org/cs/colours' }] },
            },
          },
        ],
      })
    await runCliJson(['import', 'terminology', file('v1.json', bundle('1', ['red', 'green'])), '--db', db])
    await runCliJson(['import', 'terminology', file('v2.json', bundle('2', ['blue'])), '--db', db])
    await runCliJson([
      'import',
      'terminology',
      file('v1b.json', bundle('1', ['cyan', 'magenta'])),
      '--db',
      db,
    ])
    expect(codesIn(db, 'http://example.org/cs/colours', '1')).toEqual(['cyan', 'magenta'])
    expect(codesIn(db, 'http://example.org/cs/colours', '2')).toEqual(['blue'])
  })

  it('keeps the previous data when a file cannot be read whole, and names it', async () => {
    const db = join(dir, 'atomic.db')
    await runCliJson([
      'import',
      'terminology',
      file('keep.json', JSON.stringify(codeSystem('1', ['red']))),
      '--db',
      db,
    ])
    const good = file('good.json', JSON.stringify(codeSystem('1', ['blue'])))
    const broken = file('broken.json', '{"resourceType": "CodeSystem",')
    const result = await runCli(['import', 'terminology', good, broken, '--db', db])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`${broken}: not valid JSON`)
    expect(codesIn(db, 'http://example.org/cs/colours', '1')).toEqual(['red'])
    const missing = await runCli(['import', 'terminology', join(dir, 'nowhere.json'), '--db', db])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('nowhere.json does not exist')
  })

  it('names a release without a version after the date of its file', async () => {
    const db = join(dir, 'dated.db')
    const path = file('undated.json', JSON.stringify(codeSystem(undefined, ['red'])))
    const date = new Date('2025-07-01T12:00:00Z')
    utimesSync(path, date, date)
    const summary = await runCliJson(['import', 'terminology', path, '--db', db])
    expect(summary.codeSystems[0].version).toBe('2025-07-01')
  })

  it('refuses a bad terminology source setting with one line naming it', async () => {
    const result = await runCli(['import', 'terminology', NUCC_CSV, '--db', join(dir, 'cfg.db')], {
      SVC_TERMINOLOGY_SOURCES: '{"http://loinc.org": "ftp://nope"}',
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/Invalid setting SVC_TERMINOLOGY_SOURCES/)
  })
})

describe('svc demo', () => {
  it('loads the bundled terminology and the NUCC taxonomy, then serves them', async () => {
    const child = spawn(process.execPath, [CLI, 'demo', '--port', '0', '--db', join(dir, 'demo.db')], {
      env: { PATH: process.env.PATH ?? '' },
    })
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = ''
        child.stdout.on('data', (chunk) => {
          text += chunk
          if (/listening on http/.test(text)) resolve(text)
        })
        child.once('exit', (code) => reject(new Error(`svc demo exited (${code}): ${text}`)))
      })
      expect(output).toContain('Terminology loaded: fhir-r4, us-counties, NUCC provider taxonomy')
      const key = /(svc_sk_\w+)/.exec(output)?.[1] as string
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1] as string
      const response = await request(
        `${url}/v1/fhir/r4/CodeSystem/$lookup?system=http://nucc.org/provider-taxonomy&code=207Q00000X`,
        { headers: { authorization: `Bearer ${key}` } },
      )
      expect(response.statusCode).toBe(200)
      const body = (await response.body.json()) as { parameter: { name: string; valueString?: string }[] }
      expect(body.parameter.find((p) => p.name === 'display')?.valueString).toBe('Family Medicine Physician')
    } finally {
      child.kill('SIGTERM')
    }
  })
})
