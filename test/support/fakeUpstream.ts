import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Reply = (req: IncomingMessage, res: ServerResponse) => void

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>/fhir` */
  base: string
  /** Replies to give, one per request, in order; an empty queue answers 500. */
  replies: Reply[]
  /** Replaces the queue of replies. */
  script(...replies: Reply[]): void
  /** Every request received, in order. */
  seen: { method: string; url: string; body: string; authorization?: string }[]
  /** Empties both queues between tests. */
  reset(): void
  close(): Promise<void>
}

/** A remote FHIR server on loopback answering from a script: for tests of upstream failures. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const fake: Omit<FakeUpstream, 'base' | 'close'> = {
    replies: [],
    seen: [],
    script(...replies) {
      fake.replies.splice(0, fake.replies.length, ...replies)
    },
    reset() {
      fake.replies.length = 0
      fake.seen.length = 0
    },
  }
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      fake.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        authorization: req.headers.authorization,
      })
      const reply = fake.replies.shift()
      if (reply) reply(req, res)
      else res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    ...fake,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/fhir`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A reply with a JSON body. */
export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers }).end(JSON.stringify(body))

/** A reply that never comes. */
export const hang: Reply = () => undefined
