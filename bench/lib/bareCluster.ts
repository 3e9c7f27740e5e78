import cluster from 'node:cluster'
import { createServer } from 'node:http'

/**
 * A bare node:http cluster, the floor `npm run bench -- workers` compares `svc serve --workers` with: run as
 * `node bareCluster.ts <workers> <base64 body>`, it prints `listening <port>` once every worker listens and
 * serves the same bytes from each, with no routing, auth or store.
 */
const [count = '2', body = ''] = process.argv.slice(2)
if (cluster.isPrimary) {
  let listening = 0
  for (let index = 0; index < Number(count); index++)
    cluster.fork().on('listening', (address) => {
      if (++listening === Number(count)) console.log(`listening ${address.port}`)
    })
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill()
    process.exit(0)
  })
} else {
  const bytes = Buffer.from(body, 'base64')
  const head = { 'Content-Type': 'application/json', 'Content-Length': bytes.length }
  createServer((_request, response) => {
    response.writeHead(200, head)
    response.end(bytes)
  }).listen(Number(process.env.BARE_PORT ?? 0), '127.0.0.1')
}
