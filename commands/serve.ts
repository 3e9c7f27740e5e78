import { SvcCommand } from '../src/cli/baseCommand.js'
import { runServerUntilSignalled } from '../src/cli/runServer.js'
import { backgroundSync, serveFlags, serveOverrides } from '../src/cli/serveFlags.js'

export default class Serve extends SvcCommand {
  static override description = 'Serve the API over HTTP (loopback only unless --host says otherwise)'
  static override enableJsonFlag = false
  static override examples = [
    '<%= config.bin %> serve',
    'SVC_PORT=9000 <%= config.bin %> serve --db /var/lib/svc/svc.db',
    '<%= config.bin %> serve --host 0.0.0.0 --base-url https://api.example.org',
    '<%= config.bin %> serve --sync-interval 0',
  ]
  static override flags = serveFlags

  async run() {
    const { flags } = await this.parse(Serve)
    await runServerUntilSignalled(
      this.resolveConfig(serveOverrides(flags)),
      (line) => this.log(line),
      backgroundSync(flags, this.config.root),
    )
  }
}
