import { readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createOperator } from '../src/accounts/operators.js'
import { startSession } from '../src/accounts/sessions.js'
import { newestChangelogVersion } from '../src/docs/pages.js'
import { API_VERSION } from '../src/version.js'
import { CLI, runCli, runCliJson } from './support/cli.js'
import { SMART_EXAMPLES } from './support/fixtures.js'
import { bearer, startTestServer, type TestResponse, type TestServer } from './support/harness.js'

const EMAIL = 'ops@example.org'
const PASSWORD = 'a long enough password'
const HOSTILE_NAME = '<img src=x onerror=alert(1)>'

let t: TestServer | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

/** A browser's form post from the dashboard's own origin. */
const post = (
  server: TestServer,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  server.send('POST', path, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url, ...headers },
    body: new URLSearchParams(fields).toString(),
  })

const cookieOf = (response: TestResponse) => (response.headers['set-cookie'] ?? '').split(';')[0] as string
const csrfOf = (page: TestResponse) => /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? ''

async function signedIn(server: TestServer) {
  createOperator(server.server.db, { email: EMAIL, password: PASSWORD })
  const answer = await post(server, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD })
  expect(answer.status).toBe(303)
  const cookie = cookieOf(answer)
  const page = await server.get('/dashboard/organizations', { cookie })
  return { cookie, csrf: csrfOf(page), setCookie: answer.headers['set-cookie'] as string }
}

describe('dashboard sessions', () => {
  it('sets an HttpOnly, SameSite=Strict cookie on /dashboard, and every page is no-store under a strict CSP', async () => {
    t = await startTestServer()
    const { cookie, setCookie } = await signedIn(t)
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Strict/)
    expect(setCookie).toMatch(/Path=\/dashboard/)
    expect(setCookie).not.toMatch(/Secure/) // http base URL
    const page = await t.get('/dashboard', { cookie })
    expect(page.status).toBe(200)
    expect(page.headers['cache-control']).toBe('no-store')
    const csp = page.headers['content-security-policy'] as string
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
  })

  it('marks the cookie Secure when the base URL is https', async () => {
    t = await startTestServer({ env: { SVC_BASE_URL: 'https://svc.example.org' } })
    const { setCookie } = await signedIn(t)
    expect(setCookie).toMatch(/; Secure/)
  })

  it('ends a session idle for 30 minutes, and any after 12 hours', async () => {
    t = await startTestServer()
    const { cookie } = await signedIn(t)
    const signedInPage = (response: TestResponse) => response.text.includes('Sign out')
    t.setNow(t.now() + 29 * 60_000)
    expect(signedInPage(await t.get('/dashboard', { cookie }))).toBe(true)
    t.setNow(t.now() + 31 * 60_000)
    expect(signedInPage(await t.get('/dashboard', { cookie }))).toBe(false)

    const again = cookieOf(await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD }))
    for (let step = 0; step < 24; step++) {
      t.setNow(t.now() + 29 * 60_000)
      expect(signedInPage(await t.get('/dashboard', { cookie: again }))).toBe(true)
    }
    t.setNow(t.now() + 29 * 60_000) // 12 h 30 min after sign-in, though never idle
    expect(signedInPage(await t.get('/dashboard', { cookie: again }))).toBe(false)
  })

  it('signing out ends the session on the server', async () => {
    t = await startTestServer()
    const { cookie, csrf } = await signedIn(t)
    expect((await post(t, '/dashboard/sign-out', { _csrf: csrf }, { cookie })).status).toBe(303)
    expect((await t.get('/dashboard/organizations', { cookie })).status).toBe(401)
  })

  it('refuses a state change from another origin or without the form token, and changes nothing', async () => {
    t = await startTestServer()
    const { cookie, csrf } = await signedIn(t)
    const evil = await post(
      t,
      '/dashboard/organizations',
      { slug: 'evil', _csrf: csrf },
      { cookie, origin: 'https://evil.example' },
    )
    expect(evil.status).toBe(403)
    const tokenless = await post(t, '/dashboard/organizations', { slug: 'evil' }, { cookie })
    expect(tokenless.status).toBe(403)
    const orgs = await t.get('/dashboard/organizations', { cookie })
    expect(orgs.text).not.toContain('evil')
    const made = await post(t, '/dashboard/organizations', { slug: 'good', _csrf: csrf }, { cookie })
    expect(made.status).toBe(303)
    expect(made.headers.location).toBe('/dashboard/organizations/good')
  })

  it('throttles the sixth failure in 15 minutes per account and per address, with one message for both kinds', async () => {
    t = await startTestServer()
    createOperator(t.server.db, { email: EMAIL, password: PASSWORD })
    const unknown = await post(t, '/dashboard/sign-in', {
      email: 'nobody@example.org',
      password: 'whatever it is',
    })
    const wrong = await post(t, '/dashboard/sign-in', { email: EMAIL, password: 'not the password' })
    expect(unknown.status).toBe(401)
    expect(wrong.status).toBe(401)
    const message = (page: TestResponse) => /role="alert">([^<]+)</.exec(page.text)?.[1]
    expect(message(unknown)).toBe(message(wrong))
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await post(t, '/dashboard/sign-in', { email: EMAIL, password: 'still wrong' })).status).toBe(
        401,
      )
    const sixth = await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD })
    expect(sixth.status).toBe(429)
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0)
    t.setNow(t.now() + 15 * 60_000 + 1000)
    expect((await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD })).status).toBe(303)
  })

  it('answers a page, not JSON, when the store cannot be written, and signs in once it can', async () => {
    t = await startTestServer()
    const operator = createOperator(t.server.db, { email: EMAIL, password: PASSWORD })
    // The live file may not grow, and the sessions' page is full: a full disk, on any machine.
    const live = t.server.live
    live.pragma(`max_page_count = ${live.pragma('page_count', { simple: true })}`)
    expect(() => {
      for (;;) startSession(live, operator.id, t?.now() ?? 0)
    }).toThrow(/database or disk is full/)
    const refused = await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD })
    expect(refused.status).toBe(503)
    expect(refused.headers['content-type']).toMatch(/^text\/html/)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.text).toContain('The store cannot be used at the moment')
    expect(refused.headers['set-cookie']).toBeUndefined()
    live.pragma('max_page_count = 1073741823')
    expect((await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD })).status).toBe(303)
  })

  it('shows the last minute of every serving process as live figures', async () => {
    t = await startTestServer()
    const server = t
    const { cookie } = await signedIn(server)
    for (let i = 0; i < 7; i++)
      expect((await server.get('/v1/scheduling/publishers', bearer(server.key))).status).toBe(200)
    await expect
      .poll(async () => (await server.get('/dashboard/live.json', { cookie })).json.requestsPerMinute)
      .toBe(7)
    const figures = (await server.get('/dashboard/live.json', { cookie })).json
    expect(figures.p50Ms).toBeGreaterThan(0)
    expect(figures.errorRate).toBe(0)
    // A minute later those requests have left the figures.
    server.setNow(server.now() + 61_000)
    await expect
      .poll(async () => (await server.get('/dashboard/live.json', { cookie })).json.requestsPerMinute)
      .toBe(0)
  })

  it('keeps API keys and dashboard sessions apart', async () => {
    t = await startTestServer()
    const { cookie } = await signedIn(t)
    const withKey = await t.get('/dashboard/organizations', bearer(t.key))
    expect(withKey.status).toBe(401)
    expect(withKey.text).not.toContain('Acme')
    const withSession = await t.get('/v1/scheduling/publishers', { cookie })
    expect(withSession.status).toBe(401)
  })

  it('shows a new key once and stores it nowhere', async () => {
    t = await startTestServer()
    const { cookie, csrf } = await signedIn(t)
    const created = await post(
      t,
      '/dashboard/organizations/acme/keys',
      { name: 'app', _csrf: csrf },
      { cookie },
    )
    expect(created.status).toBe(303)
    const page = await t.get('/dashboard/organizations/acme', { cookie })
    const secret = /id="new-key">([^<]+)</.exec(page.text)?.[1] as string
    expect(secret).toMatch(/^svc_/)
    expect((await t.get('/v1/scheduling/publishers', bearer(secret))).status).toBe(200)
    expect((await t.get('/dashboard/organizations/acme', { cookie })).text).not.toContain(secret)
    await t.server.flush()
    for (const file of [t.dbPath, `${t.dbPath.replace(/\.db$/, '')}.live.db`])
      expect(readFileSync(file).includes(Buffer.from(secret))).toBe(false)
  })
})

describe('the request list', () => {
  it('filters by status, key and path, pages newest first, and names every fault', async () => {
    t = await startTestServer()
    const { cookie } = await signedIn(t)
    expect((await t.get('/v1/scheduling/publishers', bearer(t.key))).status).toBe(200)
    expect((await t.get('/v1/scheduling/slots?nonsense=1', bearer(t.key))).status).toBe(400)
    await t.server.flush()
    const listed = (page: TestResponse) =>
      [...page.text.matchAll(/<td class="wrap">GET ([^<]+)<\/td>/g)].map((m) => m[1])
    expect(listed(await t.get('/dashboard/requests?status=4xx', { cookie }))).toEqual([
      '/v1/scheduling/slots',
    ])
    expect(listed(await t.get('/dashboard/requests?status=200&path=%2Fv1%2Fscheduling', { cookie }))).toEqual(
      ['/v1/scheduling/publishers'],
    )
    const acmeKey = t.server.db.prepare('SELECT id FROM api_keys').pluck().get() as string
    expect(listed(await t.get(`/dashboard/requests?key=${acmeKey}`, { cookie }))).toHaveLength(2)
    const faulty = await t.get('/dashboard/requests?status=abc&key=key_nope&from=yesterday', { cookie })
    expect(faulty.status).toBe(400)
    for (const fault of ['Status is a class', 'No key key_nope', 'From is not a date'])
      expect(faulty.text).toContain(fault)

    const insert = t.server.live.prepare(
      `INSERT INTO request_log (request_id, at, org_id, key_id, method, path, route, status, duration_ms, bytes)
       VALUES (?, ?, 1, NULL, 'GET', ?, NULL, 200, 1, 10)`,
    )
    for (let i = 0; i < 120; i++) insert.run(`seeded-${i}`, t.now() - 60_000 - i * 1000, `/v1/seeded/${i}`)
    const seen: string[] = []
    let next: string | undefined = '/dashboard/requests?path=%2Fv1%2Fseeded'
    while (next) {
      const page = await t.get(next, { cookie })
      seen.push(...(listed(page) as string[]))
      next = /href="([^"]+)" rel="next"/.exec(page.text)?.[1]?.replaceAll('&amp;', '&')
    }
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `/v1/seeded/${i}`))
  })
})

describe('the data page', () => {
  it('enables and disables publishers, and says why a sync now is refused', async () => {
    t = await startTestServer()
    const { cookie, csrf } = await signedIn(t)
    const env = { SVC_DB: t.dbPath }
    await runCliJson(
      [
        'publishers',
        'add',
        'smart',
        '--name',
        HOSTILE_NAME,
        '--manifest',
        join(SMART_EXAMPLES, '$bulk-publish'),
      ],
      env,
    )
    await runCliJson(['import', 'publishers'], env)
    const data = await t.get('/dashboard/data', { cookie })
    expect(data.text).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(data.text).not.toContain(HOSTILE_NAME)
    expect(data.text).toMatch(/synced/)

    expect((await post(t, '/dashboard/publishers/smart/disable', { _csrf: csrf }, { cookie })).status).toBe(
      303,
    )
    const listed = await runCliJson<{ slug: string; enabled: boolean }[]>(['publishers', 'list'], env)
    expect(listed).toEqual([expect.objectContaining({ slug: 'smart', enabled: false })])
    await post(t, '/dashboard/publishers/smart/enable', { _csrf: csrf }, { cookie })
    expect((await runCliJson<{ enabled: boolean }[]>(['publishers', 'list'], env))[0]?.enabled).toBe(true)

    // The CLI's sync just fetched it: the once-a-minute rule refuses a second one, and the page says why.
    expect((await post(t, '/dashboard/publishers/smart/sync', { _csrf: csrf }, { cookie })).status).toBe(303)
    const refused = await t.get('/dashboard/data', { cookie })
    expect(refused.text).toMatch(/Sync of smart refused: fetched less than a minute ago.*try again in \d+ s/)
  })
})

describe('operators from the CLI', () => {
  const withStdin = (args: string[], input: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '' } })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk) => (stdout += chunk))
      child.stderr.on('data', (chunk) => (stderr += chunk))
      child.on('close', (code) => resolve({ code, stdout, stderr }))
      child.stdin.end(input)
    })

  it('creates, lists, re-passwords and removes operators; short passwords and a missing terminal are refused', async () => {
    t = await startTestServer()
    const db = ['--db', t.dbPath]
    const short = await withStdin(['operators', 'create', EMAIL, '--password-stdin', ...db], 'too short\n')
    expect(short.code).toBe(2)
    expect(short.stderr).toContain('at least 12 characters')
    const noTerminal = await runCli(['operators', 'create', EMAIL, ...db])
    expect(noTerminal.code).toBe(2)
    expect(noTerminal.stderr).toContain('--password-stdin')
    const made = await withStdin(
      ['operators', 'create', EMAIL, '--password-stdin', '--json', ...db],
      `${PASSWORD}\n`,
    )
    expect(made.code).toBe(0)
    expect(JSON.parse(made.stdout).email).toBe(EMAIL)
    expect(made.stdout + made.stderr).not.toContain(PASSWORD)
    const listed = await runCliJson<{ email: string }[]>(['operators', 'list', ...db])
    expect(listed.map((operator) => operator.email)).toEqual([EMAIL])

    const cookie = cookieOf(await post(t, '/dashboard/sign-in', { email: EMAIL, password: PASSWORD }))
    const reset = await withStdin(
      ['operators', 'set-password', EMAIL, '--password-stdin', '--json', ...db],
      'another long password\n',
    )
    expect(JSON.parse(reset.stdout).sessionsEnded).toBe(1)
    expect((await t.get('/dashboard/organizations', { cookie })).status).toBe(401)
    expect(
      (await post(t, '/dashboard/sign-in', { email: EMAIL, password: 'another long password' })).status,
    ).toBe(303)
    await runCliJson(['operators', 'remove', EMAIL, ...db])
    expect(await runCliJson(['operators', 'list', ...db])).toEqual([])
  })
})

describe('the open pages', () => {
  it('serves a landing page, the reference from its own files, and the changelog at the API version', async () => {
    t = await startTestServer()
    const landing = await t.get('/', { accept: 'text/html' })
    expect(landing.status).toBe(200)
    for (const link of ['href="/docs"', 'href="/dashboard"', 'href="/openapi.json"'])
      expect(landing.text).toContain(link)
    const reference = await t.get('/docs', { accept: 'text/html' })
    expect(reference.status).toBe(200)
    const scripts = [...reference.text.matchAll(/src="([^"]+)"/g)].map((match) => match[1] as string)
    expect(scripts.every((src) => src.startsWith('/assets/'))).toBe(true)
    for (const src of scripts) expect((await t.get(src)).status).toBe(200)
    const changelog = await t.get('/docs/changelog', { accept: 'text/html' })
    expect(changelog.status).toBe(200)
    expect(changelog.text).toContain(`<h2>[${API_VERSION}]`)
    const openapi = await t.get('/openapi.json')
    expect(openapi.json.info.version).toBe(API_VERSION)
    expect(newestChangelogVersion(readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8'))).toBe(
      API_VERSION,
    )
    expect((await t.get('/assets/../package.json')).status).toBe(404)
  })
})
