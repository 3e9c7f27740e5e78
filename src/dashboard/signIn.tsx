import type { Context } from 'koa'
import { hasOperators, operatorCredentials } from '../accounts/operators.js'
import { verifyPassword } from '../accounts/passwords.js'
import { pruneSessions, startSession } from '../accounts/sessions.js'
import {
  clearAccountFailures,
  recordSignInFailure,
  signInRetryAfter,
  signInScopes,
} from '../accounts/signInThrottle.js'
import { writeWhenFree } from '../db/busy.js'
import { formOf, type Kit } from './kit.js'
import { SignInPage } from './pages/signIn.js'
import { seeOther, send } from './respond.js'
import { sessionCookie } from './session.js'

/** The sign-in form, or, with no operator yet, the command that creates the first. */
export function signInPage(kit: Kit, ctx: Context, status = 200, error?: string, email?: string): void {
  send(ctx, <SignInPage chrome={{ error }} noOperator={!hasOperators(kit.deps.db)} email={email} />, status)
}

/**
 * A sign-in: throttled per account and per address before any password is checked, one message for an
 * unknown account and a wrong password, a new session and its cookie on success.
 */
export async function signIn(kit: Kit, ctx: Context, secure: boolean): Promise<void> {
  const { db, live, clock } = kit.deps
  const form = formOf(ctx)
  const email = (form.get('email') ?? '').trim()
  const password = form.get('password') ?? ''
  const scopes = signInScopes(email, ctx.request.ip)
  const wait = signInRetryAfter(live, scopes, clock())
  if (wait > 0) {
    ctx.set('Retry-After', String(wait))
    const minutes = Math.ceil(wait / 60)
    return signInPage(kit, ctx, 429, `Too many failed sign-ins. Try again in ${minutes} minute(s).`, email)
  }
  const credentials = operatorCredentials(db, email)
  const valid = await verifyPassword(password, credentials?.passwordHash)
  if (!valid || !credentials) {
    await writeWhenFree(() => recordSignInFailure(live, scopes, clock()))
    return signInPage(kit, ctx, 401, 'That email and password do not match an operator.', email)
  }
  await writeWhenFree(() => clearAccountFailures(live, scopes[0] as string))
  // Sessions past their expiry go as a new one starts: the table holds only live ones.
  const { token } = await writeWhenFree(() => {
    pruneSessions(live, clock())
    return startSession(live, credentials.id, clock())
  })
  ctx.set('Set-Cookie', sessionCookie(token, secure))
  seeOther(ctx, '/dashboard')
}
