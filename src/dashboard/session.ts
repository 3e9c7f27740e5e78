import type { Context } from 'koa'
import { SESSION_MAX_MS } from '../accounts/sessions.js'

export const SESSION_COOKIE = 'svc_session'

/** The session token the browser sent, if any (the cookie is only sent under /dashboard). */
export function sessionToken(ctx: Context): string | undefined {
  const header = ctx.request.get('Cookie')
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === SESSION_COOKIE) return value.join('=') || undefined
  }
  return undefined
}

/** HttpOnly, SameSite=Strict, Path=/dashboard, Secure when the dashboard is reached over https. */
export function sessionCookie(token: string, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${token}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/dashboard',
    `Max-Age=${SESSION_MAX_MS / 1000}`,
  ]
  if (secure) attributes.push('Secure')
  return attributes.join('; ')
}

export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/dashboard; Max-Age=0${secure ? '; Secure' : ''}`
}

/**
 * Whether a state-changing request comes from the dashboard's own pages: its Origin must be the dashboard's
 * (as configured, or as the browser reached it); without Origin, Sec-Fetch-Site must say same-origin. A
 * client sending neither (not a browser) is judged by the form's CSRF token alone.
 */
export function sameOrigin(ctx: Context, dashboardUrl: string): boolean {
  const origin = ctx.request.get('Origin')
  if (origin !== '') {
    const reached = `${ctx.request.protocol}://${ctx.request.get('Host')}`
    return origin === new URL(dashboardUrl).origin || origin === reached
  }
  const site = ctx.request.get('Sec-Fetch-Site')
  return site === '' || site === 'same-origin'
}
