import { SvcCommand } from '../src/cli/baseCommand.js'
import { availableParallelism } from 'node:os'
import { Flags } from '@oclif/core'
import { runServerUntilSignalled } from '../src/cli/runServer.js'
import { backgroundSync, serveFlags, serveOverrides } from '../src/cli/serveFlags.js'
import { runWorkers } from '../src/cli/workers.js'

export default class Serve extends SvcCommand {
  static override description = 'Serve the API over HTTP (loopback only unless --host says otherwise)'
  static override enableJsonFlag = false
  static override examples = [
    '<%= config.bin %> serve',
    'SVC_PORT=9000 <%= config.bin %> serve --db /var/lib/svc/svc.db',
    '<%= config.bin %> serve --host 0.0.0.0 --base-url https://api.example.org',
    '<%= config.bin %> serve --sync-interval 0',
    '<%= config.bin %> serve --workers 1',
  ]
  static override flags = {
    ...serveFlags,
    workers: Flags.integer({
      description:
        'server processes sharing the listening address, the store and the plan limits (env SVC_WORKERS; default: the number of cores; 1 serves from this process)',
      env: 'SVC_WORKERS',
      min: 1,
      max: 64,
    }),
  }

  async run() {
    const { flags } = await this.parse(Serve)
    const config = await this.resolveConfig(serveOverrides(flags))
    const options = { log: (line: string) => this.log(line), sync: backgroundSync(flags) }
    const workers = flags.workers ?? availableParallelism()
    if (workers === 1) await runServerUntilSignalled(config, options)
    else await runWorkers(config, workers, options)
  }
}
