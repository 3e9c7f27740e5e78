import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Context } from 'koa'
import { packageRoot } from '../packageRoot.js'

const fromPackage = (specifier: string) => () => createRequire(import.meta.url).resolve(specifier)
const ours = (name: string) => () => join(packageRoot(), 'data', 'web', name)

/**
 * The files pages load, each from the server itself (no CDN: no request leaves it): ours in data/web/, the
 * renderers from their npm packages. A fixed list: nothing else under /assets is served.
 */
const ASSETS: Record<string, { path: () => string; type: string }> = {
  'dashboard.css': { path: ours('dashboard.css'), type: 'text/css; charset=utf-8' },
  'dashboard.js': { path: ours('dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'docs.js': { path: ours('docs.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.iife.min.js': {
    path: fromPackage('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uPlot.min.css': { path: fromPackage('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': {
    path: fromPackage('swagger-ui-dist/swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'swagger-ui.css': { path: fromPackage('swagger-ui-dist/swagger-ui.css'), type: 'text/css; charset=utf-8' },
}

const loaded = new Map<string, { body: Buffer; etag: string }>()

/** Answers GET /assets/<name> for a listed file (read once, then from memory); false for anything else. */
export function serveAsset(ctx: Context): boolean {
  const name = ctx.request.path.slice('/assets/'.length)
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
  if (!asset || (ctx.request.method !== 'GET' && ctx.request.method !== 'HEAD')) return false
  let file = loaded.get(name)
  if (!file) {
    const body = readFileSync(asset.path())
    file = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
    loaded.set(name, file)
  }
  ctx.set('ETag', file.etag)
  ctx.set('Cache-Control', 'public, max-age=3600')
  ctx.set('X-Content-Type-Options', 'nosniff')
  if (ctx.request.get('If-None-Match') === file.etag) {
    ctx.status = 304
    return true
  }
  ctx.type = asset.type
  ctx.body = file.body
  return true
}
