import type { Context } from 'koa'
import getRawBody from 'raw-body'

/** A posted form is small: an email, a password, a name. */
const FORM_LIMIT = '16kb'

/** The fields of an `application/x-www-form-urlencoded` body (what an HTML form posts). */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.request.is('application/x-www-form-urlencoded')) return new URLSearchParams()
  const text = await getRawBody(ctx.req, { limit: FORM_LIMIT, encoding: 'utf8' })
  return new URLSearchParams(text)
}
