import type { Context } from 'koa'
import type { ReactElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'

/** A page, rendered by React's server renderer: every value in it is escaped as text. */
export function send(ctx: Context, element: ReactElement, status = 200): void {
  ctx.status = status
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = `<!doctype html>\n${renderToStaticMarkup(element)}`
}

/** 303 to `location`: after a form, so that a reload does not post it again. */
export function seeOther(ctx: Context, location: string): void {
  ctx.set('Location', location)
  // The body before the status: Koa turns an empty body's status into 204.
  ctx.body = `See ${location}`
  ctx.status = 303
}
