import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { marked } from 'marked'
import { packageRoot } from '../packageRoot.js'

/** Open pages: scripts and styles are files from /assets; Swagger UI sets style attributes as it draws. */
export const DOCS_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'public, max-age=300',
}

const STYLE = `<link rel="stylesheet" href="/assets/dashboard.css">`

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,">${STYLE}</head>
<body><main>${body}</main></body></html>
`

/** `/`: what this server is, and where to go. */
export function landingPageHtml(): string {
  return page(
    'svc: healthcare data API',
    `<h1>svc</h1>
<p>A self-hosted healthcare data API: scheduling availability, a FHIR R4 base (provider directory, terminology,
questionnaires, plan benefits, medication reconciliation), behind API keys.</p>
<ul>
<li><a href="/docs">API reference</a>, from <a href="/openapi.json">the OpenAPI description</a></li>
<li><a href="/docs/errors">Errors</a> and <a href="/docs/changelog">the changelog</a></li>
<li><a href="/dashboard">Dashboard</a> (operators: organizations, API keys, requests, data)</li>
</ul>
<p>Every API path is under <code>/v1</code> and needs a key: <code>Authorization: Bearer &lt;API key&gt;</code>.</p>`,
  )
}

/** `/docs`: Swagger UI over /openapi.json, every file from this server. */
export function referencePageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API reference</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/swagger-ui.css"></head>
<body><main id="api" aria-label="API reference"><noscript>The reference needs JavaScript; the description itself is <a href="/openapi.json">/openapi.json</a>.</noscript></main>
<script src="/assets/swagger-ui-bundle.js"></script><script src="/assets/docs.js"></script></body></html>
`
}

export const changelogPath = () => join(packageRoot(), 'CHANGELOG.md')

/** `/docs/changelog`: CHANGELOG.md of the repository (ours, not callers' text), rendered once. */
let changelog: string | undefined
export function changelogPageHtml(): string {
  changelog ??= page('svc changelog', marked.parse(readFileSync(changelogPath(), 'utf8'), { async: false }))
  return changelog
}

/** The newest version the changelog records (its first `## [x.y.z]` heading). */
export function newestChangelogVersion(markdown: string): string | undefined {
  return /^## \[(\d[^\]]*)\]/m.exec(markdown)?.[1]
}
