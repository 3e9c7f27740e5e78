import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

export interface FeedServer {
  url: string
  /** Every request served, in order. */
  requests: { path: string; ifNoneMatch?: string }[]
  /** Makes one path fail with this status until cleared (`truncate-once`: only its next answer breaks off). */
  failures: Map<string, number | 'truncate' | 'truncate-once'>
  /** Makes one path's answers wait for the promise. */
  holds: Map<string, Promise<unknown>>
  /** Told of each answer's path once it is sent or broken off. */
  onAnswered?: (path: string) => void
  close(): Promise<void>
}

/**
 * A publisher's static file server on loopback: serves a directory with strong ETags and answers 304 to a
 * matching If-None-Match, as real publishers' CDNs do. A path can be told to fail or to break off mid-body.
 */
export async function startFeedServer(dir: string): Promise<FeedServer> {
  const requests: FeedServer['requests'] = []
  const failures: FeedServer['failures'] = new Map()
  const holds: FeedServer['holds'] = new Map()
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    requests.push({ path, ifNoneMatch: req.headers['if-none-match'] })
    res.once('close', () => feedServer.onAnswered?.(path))
    await holds.get(path)
    const failure = failures.get(path)
    if (failure === 'truncate-once') failures.delete(path)
    if (typeof failure === 'number') return res.writeHead(failure).end()
    let body: Buffer
    try {
      body = readFileSync(join(dir, path))
    } catch {
      return res.writeHead(404).end()
    }
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`
    if (req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end()
    if (failure === 'truncate' || failure === 'truncate-once') {
      // Promise the whole file, send half, then drop the connection.
      res.writeHead(200, { 'content-length': body.length, etag })
      res.write(body.subarray(0, Math.floor(body.length / 2)))
      return res.destroy()
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, etag }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const feedServer: FeedServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failures,
    holds,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return feedServer
}
