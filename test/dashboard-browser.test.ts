import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from './support/browser.js'
import { CLI, runCliJson, type ServeProcess, startServeProcess } from './support/cli.js'

const EMAIL = 'ops@example.org'
const PASSWORD = 'correct horse battery staple'
const HOSTILE = '<img src=x onerror=alert(1)>'
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

function createOperator(db: string, email: string, password: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'operators', 'create', email, '--password-stdin', '--db', db],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    )
    child.on('error', reject)
    child.on('close', resolve)
    child.stdin.end(`${password}\n`)
  })
}

describe('the dashboard in a real browser', () => {
  let db: string
  let serve: ServeProcess
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** Requests the browser tried to send anywhere but the server under test. */
  const elsewhere: string[] = []
  const problems: string[] = []

  const watch = async (target: BrowserContext) => {
    await target.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith(serve.url) || url.startsWith('data:')) return route.continue()
      elsewhere.push(url)
      return route.abort()
    })
  }
  const open = async (target: BrowserContext) => {
    const opened = await target.newPage()
    opened.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    // Refused resources (CSP) and script errors; the 4xx pages the tests ask for on purpose are not problems.
    opened.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(`console: ${message.text()}`)
    })
    opened.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    return opened
  }

  beforeAll(async () => {
    db = join(mkdtempSync(join(tmpdir(), 'svc-dashboard-')), 'svc.db')
    serve = await startServeProcess({ SVC_DB: db })
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await watch(context)
    page = await open(context)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await serve?.stop()
  })

  it('shows only the command that creates the first operator while there is none', async () => {
    await page.goto(`${serve.url}/dashboard`)
    await expect(page.getByRole('heading', { name: 'Set up the dashboard' }).isVisible()).resolves.toBe(true)
    expect(await page.locator('main').innerText()).toContain('svc operators create')
    expect(await page.getByRole('textbox').count()).toBe(0)
  })

  it('lets the operator created by the CLI sign in', async () => {
    expect(await createOperator(db, EMAIL, PASSWORD)).toBe(0)
    await page.goto(`${serve.url}/dashboard`)
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    // uPlot drew the charts from the tables beside them: the script ran under the page's CSP.
    await page.locator('[data-chart="hours"] canvas').waitFor()
    expect(await page.getByRole('link', { name: 'Organizations' }).isVisible()).toBe(true)
  })

  let secret: string
  let requestId: string

  it('creates an organization whose hostile name shows as text and runs nothing', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click()
    await page.getByLabel('Slug').fill('acme-health')
    await page.getByLabel('Name').fill(HOSTILE)
    await page.getByRole('button', { name: 'Create organization' }).click()
    await page.getByRole('heading', { name: HOSTILE }).waitFor()
    expect(await page.locator('main img').count()).toBe(0)
    await page.getByRole('link', { name: 'Organizations' }).click()
    expect(await page.getByRole('link', { name: HOSTILE }).isVisible()).toBe(true)
    expect(await page.locator('main img').count()).toBe(0)
    expect(problems).toEqual([])
  })

  it('shows a new key once, and the key works on /v1', async () => {
    await page.getByRole('link', { name: HOSTILE }).click()
    await page.getByLabel('Key name').fill('booking app')
    await page.getByRole('button', { name: 'Create key' }).click()
    secret = (await page.locator('#new-key').innerText()).trim()
    expect(secret).toMatch(/^svc_/)
    expect(await page.getByRole('button', { name: 'Copy key' }).isVisible()).toBe(true)

    const answer = await request(`${serve.url}/v1/scheduling/publishers`, {
      headers: { authorization: `Bearer ${secret}` },
    })
    await answer.body.text()
    expect(answer.statusCode).toBe(200)
    requestId = answer.headers['x-request-id'] as string

    await page.reload()
    expect(await page.content()).not.toContain(secret)
    expect(await page.locator('#new-key').count()).toBe(0)
  })

  it('finds the request by its X-Request-Id', async () => {
    // The log is written about once a second: until then the request is not found, and the search is
    // asked again from the Requests page.
    await expect
      .poll(
        async () => {
          await page.getByRole('link', { name: 'Requests', exact: true }).click()
          await page.getByLabel('Request id').fill(requestId)
          await page.getByRole('button', { name: 'Find request' }).click()
          return page.getByRole('heading', { name: 'Request', exact: true }).isVisible()
        },
        { timeout: 10_000 },
      )
      .toBe(true)
    const text = await page.locator('main').innerText()
    expect(text).toContain('/v1/scheduling/publishers')
    expect(text).toContain('acme-health')
  })

  it('revokes the key after a confirmation, and /v1 then refuses it', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click()
    await page.getByRole('link', { name: HOSTILE }).click()
    await page.getByRole('button', { name: /^Revoke key booking app/ }).click()
    await page.getByRole('heading', { name: 'Revoke this key?' }).waitFor()
    await page.getByRole('button', { name: /^Revoke/ }).click()
    await page.getByRole('status').waitFor()
    expect(await page.getByRole('status').innerText()).toContain('revoked')
    const answer = await request(`${serve.url}/v1/scheduling/publishers`, {
      headers: { authorization: `Bearer ${secret}` },
    })
    await answer.body.text()
    expect(answer.statusCode).toBe(401)
  })

  it('changes nothing when another site posts a form while the operator is signed in', async () => {
    const evil: Server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html')
      res.end(`<!doctype html><form id="f" method="post" action="${serve.url}/dashboard/organizations">
        <input name="slug" value="evil-org"><input name="name" value="Evil"></form>
        <script>document.getElementById('f').submit()</script>`)
    })
    evil.listen(0, '127.0.0.1')
    await new Promise((resolve) => evil.once('listening', resolve))
    const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}`
    const attacked = await context.newPage()
    await context.route(`${evilUrl}/**`, (route) => route.continue())
    const posted = attacked.waitForResponse((response) => response.url().endsWith('/dashboard/organizations'))
    await attacked.goto(evilUrl)
    expect((await posted).status()).toBeGreaterThanOrEqual(400)
    await attacked.close()
    evil.close()
    elsewhere.splice(0) // the attacking page itself was on another origin, on purpose
    const orgs = await runCliJson<{ slug: string }[]>(['orgs', 'list', '--db', db])
    expect(orgs.map((org) => org.slug)).not.toContain('evil-org')
  })

  it('renders the API reference from /openapi.json with files of its own', async () => {
    await page.goto(`${serve.url}/docs`)
    await page.locator('.swagger-ui .info .title').waitFor()
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('svc')
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20)
  })

  it('has no serious or critical axe-core violation on any page', async () => {
    const axeContext = await browser.newContext({
      bypassCSP: true,
      storageState: await context.storageState(),
    })
    const axePage = await axeContext.newPage()
    const pages = [
      '/dashboard',
      '/dashboard/organizations',
      '/dashboard/organizations/acme-health',
      '/dashboard/requests',
      `/dashboard/requests/${requestId}`,
      '/dashboard/data',
      '/',
      '/docs/changelog',
    ]
    const found: string[] = []
    for (const path of pages) {
      await axePage.goto(`${serve.url}${path}`)
      await axePage.addScriptTag({ path: AXE })
      const violations = (await axePage.evaluate(async () => {
        const result = await (
          globalThis as unknown as {
            axe: { run(): Promise<{ violations: { id: string; impact: string; help: string }[] }> }
          }
        ).axe.run()
        return result.violations
      })) as { id: string; impact: string; help: string }[]
      for (const violation of violations)
        if (violation.impact === 'serious' || violation.impact === 'critical')
          found.push(`${path}: ${violation.id} (${violation.help})`)
    }
    await axeContext.close()
    expect(found).toEqual([])
  })

  it('fits a 390-pixel phone screen without sideways scrolling', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      storageState: await context.storageState(),
    })
    await watch(phone)
    const phonePage = await open(phone)
    const wide: string[] = []
    for (const path of [
      '/dashboard',
      '/dashboard/organizations',
      '/dashboard/organizations/acme-health',
      '/dashboard/requests',
      '/dashboard/data',
    ]) {
      await phonePage.goto(`${serve.url}${path}`)
      const width = await phonePage.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
      )
      if (width > 390) wide.push(`${path}: ${width}px`)
    }
    await phone.close()
    expect(wide).toEqual([])
  })

  it('throttles the sixth wrong password', async () => {
    const stranger = await browser.newContext()
    await watch(stranger)
    const signIn = await open(stranger)
    const statuses: number[] = []
    for (let attempt = 0; attempt < 6; attempt++) {
      await signIn.goto(`${serve.url}/dashboard/sign-in`)
      await signIn.getByLabel('Email').fill(EMAIL)
      await signIn.getByLabel('Password').fill(`wrong password ${attempt}`)
      const answered = signIn.waitForResponse((response) => response.request().method() === 'POST')
      await signIn.getByRole('button', { name: 'Sign in' }).click()
      const response = await answered
      statuses.push(response.status())
      if (attempt === 5) expect(Number(response.headers()['retry-after'])).toBeGreaterThan(0)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    expect(await signIn.getByRole('alert').innerText()).toContain('Too many failed sign-ins')
    await stranger.close()
  })

  it('sent nothing anywhere but the server, and met no script error', () => {
    expect(elsewhere).toEqual([])
    expect(problems).toEqual([])
  })
})
