import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkKeyShape, KEY_PREFIX } from '../src/accounts/keyFormat.js'
import { CLI, runCli, runCliJson } from './support/cli.js'

let dir: string
let env: Record<string, string>
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'))
  env = { SVC_DB: join(dir, 'svc.db') }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('svc orgs and keys', () => {
  it('creates organizations on Developer by default and changes plans', async () => {
    const org = await runCliJson(['orgs', 'create', 'acme-health', '--name', 'Acme Health'], env)
    expect(org).toMatchObject({ slug: 'acme-health', name: 'Acme Health', plan: 'developer' })
    await runCliJson(['orgs', 'set-plan', 'acme-health', 'team'], env)
    const list = await runCliJson<{ slug: string; plan: string }[]>(['orgs', 'list'], env)
    expect(list).toEqual([expect.objectContaining({ slug: 'acme-health', plan: 'team' })])
  })

  it('prints a key once as {id,key,org,name,createdAt} and lists only its prefix', async () => {
    const created = await runCliJson(['keys', 'create', '--org', 'acme-health', '--name', 'booking app'], env)
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'org'])
    expect(created.key.startsWith(KEY_PREFIX)).toBe(true)
    expect(checkKeyShape(created.key)).toBe('well-formed')
    const listed = await runCli(['keys', 'list', '--org', 'acme-health'], env)
    expect(listed.stdout).toContain(created.id)
    expect(listed.stdout).toContain('booking app')
    expect(listed.stdout).not.toContain(created.key)
    const revoked = await runCliJson(['keys', 'revoke', created.id], env)
    expect(revoked.revokedAt).toEqual(expect.any(String))
    expect((await runCli(['keys', 'revoke', created.id], env)).stderr).toMatch(/already revoked/)
  })

  it('refuses bad input with a one-line error and a non-zero exit', async () => {
    const duplicate = await runCli(['orgs', 'create', 'acme-health'], env)
    expect(duplicate.code).not.toBe(0)
    expect(duplicate.stderr).toMatch(/already exists/)
    const unknownOrg = await runCli(['keys', 'create', '--org', 'nobody'], env)
    expect(unknownOrg.code).not.toBe(0)
    expect(unknownOrg.stderr).toMatch(/No organization "nobody"/)
    // A request id that is not one is a usage error; a well-formed one not in the log is a lookup that found nothing.
    const malformed = await runCli(['requests', 'show', 'nope'], env)
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toContain('"nope" is not a request id')
    const unknown = await runCli(['requests', 'show', '0B6A0C3E-2F43-4A8E-9D51-2F7D0D5D9A11'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('No request 0B6A0C3E-2F43-4A8E-9D51-2F7D0D5D9A11 in the log')
  })
})

describe('a store svc cannot use', () => {
  /** stderr's error without oclif's wrapping: one sentence, whatever the terminal's width. */
  const sentence = (stderr: string) => stderr.replace(/\s*›\s*/g, ' ').trim()

  it('is named in one line, without a stack trace: not a database, a directory, a newer version', async () => {
    const junk = join(dir, 'junk.db')
    writeFileSync(junk, 'this is not an SQLite file, but an operator typo away from one'.repeat(100))
    const notDatabase = await runCli(['orgs', 'list', '--db', junk])
    expect(notDatabase.code).toBe(1)
    expect(sentence(notDatabase.stderr)).toBe(
      `Error: Cannot use the store at ${junk}: file is not a database (SQLITE_NOTADB)`,
    )
    const directory = await runCli(['serve', '--db', dir, '--port', '0'])
    expect(directory.code).toBe(1)
    expect(sentence(directory.stderr)).toBe(
      `Error: Cannot use the store at ${dir}: unable to open database file (SQLITE_CANTOPEN)`,
    )
    // A file a newer svc wrote (a schema step this one does not know) is refused before anything is changed.
    const newer = join(dir, 'newer.db')
    await runCli(['orgs', 'create', 'kept', '--db', newer])
    const db = new Database(newer)
    db.prepare(
      "INSERT INTO schema_steps (id, applied_at) VALUES ('scheduling/from-a-later-release', 'x')",
    ).run()
    db.close()
    const before = readFileSync(newer)
    const refused = await runCli(['orgs', 'create', 'another', '--db', newer])
    expect(refused.code).toBe(2)
    expect(sentence(refused.stderr)).toContain(
      `${newer} was written by a newer version of svc: it records schema steps this version does not know (scheduling/from-a-later-release)`,
    )
    expect(readFileSync(newer).equals(before)).toBe(true)
  })
})

describe('a command during an import', () => {
  it('says an import is writing and waits for it, instead of failing after 5 s', async () => {
    const path = join(dir, 'busy.db')
    await runCli(['orgs', 'list', '--db', path])
    // This process plays the import: it holds the main file's write lock until the command says it waits.
    const importer = new Database(path)
    importer.exec('BEGIN IMMEDIATE')
    importer.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('imported', 'x', 'y')").run()
    const child = spawn(process.execPath, [CLI, 'orgs', 'create', 'waited', '--db', path], {
      env: { PATH: process.env.PATH ?? '' },
    })
    let stderr = ''
    const exited = once(child, 'close')
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk) => {
        stderr += chunk
        if (/is writing to the store/.test(stderr)) resolve()
      }),
    )
    expect(child.exitCode).toBe(null)
    importer.exec('COMMIT')
    importer.close()
    const [code] = await exited
    expect(code).toBe(0)
    expect(stderr.replace(/\s*›\s*/g, ' ')).toContain(
      'Another process is writing to the store (an import or a sync): a change this command makes waits for it to finish (up to 120 s).',
    )
    const slugs = (await runCliJson<{ slug: string }[]>(['orgs', 'list', '--db', path])).map(
      (org) => org.slug,
    )
    expect(slugs.sort()).toEqual(['imported', 'waited'])
    // With nobody writing, no word of it; and a command that only reads neither waits nor says anything.
    expect((await runCli(['orgs', 'list', '--db', path])).stderr).toBe('')
    const reader = new Database(path)
    reader.exec('BEGIN IMMEDIATE')
    const listed = await runCli(['orgs', 'list', '--db', path])
    reader.exec('ROLLBACK')
    reader.close()
    expect([listed.code, listed.stderr]).toEqual([0, ''])
  })
})

describe('configuration', () => {
  it.each([
    [{ SVC_PORT: 'eighty' }, /SVC_PORT/],
    [{ SVC_BASE_URL: 'not a url' }, /SVC_BASE_URL/],
    [{ SVC_ANSWER_CACHE_MB: '-1' }, /SVC_ANSWER_CACHE_MB/],
    [{ SVC_CONFIG: '/nonexistent/svc.json' }, /config/],
  ])('names the bad setting %j and exits non-zero', async (bad, name) => {
    const result = await runCli(['serve'], { ...env, ...bad })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/Invalid setting/)
    expect(result.stderr).toMatch(name)
  })

  it('reads a config file below the environment, and names the file when a value in it is bad', async () => {
    const file = join(dir, 'svc.config.json')
    writeFileSync(file, JSON.stringify({ db: join(dir, 'from-file.db') }))
    const fromFile = await runCliJson(['orgs', 'create', 'filed', '--config', file])
    expect(fromFile.slug).toBe('filed')
    expect(existsSync(join(dir, 'from-file.db'))).toBe(true)
    const envWins = await runCliJson<unknown[]>(['orgs', 'list', '--config', file], env)
    expect(envWins).not.toContainEqual(expect.objectContaining({ slug: 'filed' }))
    writeFileSync(file, JSON.stringify({ port: 'x' }))
    const served = await runCli(['serve', '--config', file])
    expect(served.code).not.toBe(0)
    expect(served.stderr).toMatch(/Invalid setting .*svc\.config\.json: port/)
  })

  it('checks every setting given, ruled or text, in a command that loads no rule otherwise', async () => {
    const file = join(dir, 'text.config.json')
    writeFileSync(file, JSON.stringify({ db: 5 }))
    const notText = await runCli(['orgs', 'list', '--config', file])
    expect(notText.code).not.toBe(0)
    // oclif wraps the line: read it as one.
    const oneLine = (text: string) => text.replace(/\s*\n ›\s*/g, ' ')
    expect(oneLine(notText.stderr)).toMatch(
      /Invalid setting .*text\.config\.json: db: 5 \(must be a non-empty text\)/,
    )
    const ruled = await runCli(['orgs', 'list'], { ...env, SVC_UPSTREAM_DEADLINE_S: '0' })
    expect(ruled.code).not.toBe(0)
    expect(oneLine(ruled.stderr)).toMatch(
      /Invalid setting SVC_UPSTREAM_DEADLINE_S: "0" \(must be a number of seconds/,
    )
  })
})

describe('help', () => {
  it('lists every command, each with examples', async () => {
    const top = await runCli(['--help'])
    for (const topic of ['orgs', 'keys', 'publishers', 'requests', 'serve', 'demo'])
      expect(top.stdout).toContain(topic)
    for (const command of ['orgs create', 'keys create', 'keys revoke', 'requests show', 'serve']) {
      const help = await runCli([...command.split(' '), '--help'])
      expect(help.stdout).toContain('EXAMPLES')
    }
  })

  it('shows the sources of every import in its usage, and refuses an import given none with exit 2', async () => {
    for (const kind of ['directory', 'terminology', 'questionnaires', 'plans']) {
      const help = await runCli(['import', kind, '--help'])
      expect(help.stdout).toContain(`svc import ${kind} SOURCES...`)
      const none = await runCli(['import', kind, '--db', join(dir, 'none.db')])
      expect(none.code).toBe(2)
      expect(none.stderr).toContain('Missing 1 required arg')
    }
  })
})
