// npm run screenshots: the README's pictures of the dashboard and of `svc top`, made from a real server on
// the bundled demo data with some traffic, in Debian's chromium (SVC_CHROMIUM or `chromium` on PATH).
// Writes docs/screenshots/dashboard.png, dashboard-organization.png and top.png.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import xterm from '@xterm/headless'
import { spawn as spawnPty } from 'node-pty'
import { request } from 'undici'
import { createKey } from '../src/accounts/keys.js'
import { createOperator } from '../src/accounts/operators.js'
import { createOrganization } from '../src/accounts/orgs.js'
import { resolveAppConfig } from '../src/app/config.js'
import { loadDemoData } from '../src/app/demo.js'
import { startServer } from '../src/app/server.js'
import { openDatabase } from '../src/app/store.js'
import { ingestLimits } from '../src/ingest/limits.js'
import { syncPublishers } from '../src/scheduling/sync/syncPublisher.js'
import { launchChromium } from '../test/support/browser.js'

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
const CLI = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const EMAIL = 'ops@example.org'
const PASSWORD = 'screenshots only, long enough'
const PATHS = [
  '/v1/scheduling/slots?limit=5',
  '/v1/scheduling/publishers',
  '/v1/fhir/r4/Practitioner?name=cormier',
  '/v1/fhir/r4/InsurancePlan?county=12031&_count=2',
  '/v1/fhir/r4/Questionnaire?code=88121-9',
  '/v1/fhir/r4/metadata',
  '/v1/scheduling/slots?nonsense=1',
]

const dir = mkdtempSync(join(tmpdir(), 'svc-screenshots-'))
const dbPath = join(dir, 'svc.db')
const config = await resolveAppConfig({ db: dbPath, port: 0, host: '127.0.0.1' }, {})
const db = openDatabase(dbPath)
await loadDemoData(db, Date.now())
await syncPublishers(db, { clock: Date.now, limits: ingestLimits(config) })
const keys = [createKey(db, { org: 'demo', name: 'demo app' }).key]
for (const [slug, name, plan] of [
  ['acme-health', 'Acme Health', 'team'],
  ['river-clinic', 'River Clinic', 'scale'],
] as const) {
  createOrganization(db, { slug, name, plan })
  keys.push(createKey(db, { org: slug, name: 'booking app' }).key)
}
createOperator(db, { email: EMAIL, password: PASSWORD })
db.close()

const server = await startServer(config, Date.now)
const traffic = async (requests: number) => {
  for (let i = 0; i < requests; i++) {
    const answer = await request(`${server.url}${PATHS[i % PATHS.length]}`, {
      headers: { authorization: `Bearer ${keys[i % keys.length]}` },
    })
    await answer.body.text()
  }
}
await traffic(400)
await server.flush()

const browser = await launchChromium()
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  await page.goto(`${server.url}/dashboard/sign-in`)
  await page.getByLabel('Email').fill(EMAIL)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.locator('[data-chart="hours"] canvas').waitFor()
  await page.screenshot({ path: join(OUT, 'dashboard.png') })
  await page.getByRole('link', { name: 'Organizations' }).click()
  await page.getByRole('link', { name: 'Acme Health' }).click()
  await page.getByLabel('Key name').fill('reporting')
  await page.getByRole('button', { name: 'Create key' }).click()
  await page.locator('#new-key').waitFor()
  // The secret shown once is a real key of a store deleted below.
  await page.screenshot({ path: join(OUT, 'dashboard-organization.png'), fullPage: true })

  // svc top on a pseudo-terminal, read through xterm's emulator, drawn as text in the browser.
  const terminal = new xterm.Terminal({ cols: 120, rows: 34, allowProposedApi: true })
  const top = spawnPty(process.execPath, [CLI, 'top', '--db', dbPath], {
    cols: 120,
    rows: 34,
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color' },
  })
  top.onData((data) => terminal.write(data))
  await traffic(600)
  await server.flush()
  await new Promise((resolve) => setTimeout(resolve, 2500))
  await new Promise<void>((resolve) => terminal.write('', resolve))
  const buffer = terminal.buffer.active
  const lines = Array.from(
    { length: terminal.rows },
    (_, row) => buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '',
  )
  top.kill()
  const screen = await browser.newPage({ viewport: { width: 1000, height: 600 } })
  await screen.setContent('<pre id="screen"></pre>')
  await screen.evaluate((text) => {
    const pre = (
      globalThis as unknown as {
        document: {
          getElementById(id: string): { textContent: string; setAttribute(name: string, value: string): void }
        }
      }
    ).document.getElementById('screen')
    pre.textContent = text
    pre.setAttribute(
      'style',
      'margin:0;padding:12px;background:#111;color:#ddd;font:13px/1.25 "DejaVu Sans Mono",monospace;display:inline-block',
    )
  }, lines.join('\n'))
  await screen.locator('#screen').screenshot({ path: join(OUT, 'top.png') })
} finally {
  await browser.close()
  await server.close()
  rmSync(dir, { recursive: true, force: true })
}
console.log(`Wrote dashboard.png, dashboard-organization.png and top.png in ${OUT}`)
