import type { Middleware } from 'koa'
import compress from 'koa-compress'

/**
 * koa-compress, run only for callers that send Accept-Encoding. Without that header it can only answer
 * identity (its default), yet its checks on every response cost about as much as routing one. The answer
 * varies by the header either way, and says so, so a cache between keeps the two forms apart.
 */
export function compressWhenAccepted(options: compress.CompressOptions): Middleware {
  const compressing = compress(options)
  return (ctx, next) => {
    if (ctx.get('Accept-Encoding') !== '') return compressing(ctx, next)
    ctx.vary('Accept-Encoding')
    return next()
  }
}
