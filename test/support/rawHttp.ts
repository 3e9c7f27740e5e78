import { connect } from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  text: string
  json: any
}

/**
 * One HTTP/1.1 request written byte for byte on a fresh socket: the path goes out exactly as given, with no
 * URL parser to resolve its dot segments, escapes or backslashes first (as fetch and undici would).
 */
export function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(url)
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close']
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  const request = `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const split = raw.indexOf('\r\n\r\n')
      const [statusLine = '', ...headerLines] = raw.slice(0, split).split('\r\n')
      const parsed: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      let text = raw.slice(split + 4)
      if (parsed['transfer-encoding'] === 'chunked') text = unchunk(text)
      let json: unknown
      try {
        json = text ? JSON.parse(text) : undefined
      } catch {
        json = undefined
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, text, json })
    })
    socket.write(request)
  })
}

function unchunk(text: string): string {
  let out = ''
  let rest = text
  for (;;) {
    const end = rest.indexOf('\r\n')
    const size = Number.parseInt(rest.slice(0, end), 16)
    if (!size) return out
    out += rest.slice(end + 2, end + 2 + size)
    rest = rest.slice(end + 2 + size + 2)
  }
}
