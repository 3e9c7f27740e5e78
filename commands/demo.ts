import { join } from 'node:path'
import { createKey } from '../src/accounts/keys.js'
import { createOrganization, findOrganization } from '../src/accounts/orgs.js'
import { SvcCommand } from '../src/cli/baseCommand.js'
import { runServerUntilSignalled } from '../src/cli/runServer.js'
import { backgroundSync, serveFlags, serveOverrides } from '../src/cli/serveFlags.js'
import { type Db, openDatabase } from '../src/db/open.js'
import { addPublisher, findPublisher } from '../src/scheduling/publishers.js'
import { syncPublishers } from '../src/scheduling/sync.js'

const DEMO_PUBLISHER = 'smart-examples'

export default class Demo extends SvcCommand {
  static override description =
    'Bring the appliance up on the bundled demo data: database, demo organization, a fresh key (printed), server'
  static override enableJsonFlag = false
  static override examples = [
    '<%= config.bin %> demo',
    '<%= config.bin %> demo --port 9000 --db /tmp/demo.db',
  ]
  static override flags = serveFlags

  async run() {
    const { flags } = await this.parse(Demo)
    const config = this.resolveConfig(serveOverrides(flags))
    const db = openDatabase(config.db)
    try {
      if (!findOrganization(db, 'demo')) createOrganization(db, { slug: 'demo', name: 'Demo organization' })
      await this.loadScheduling(db)
      const key = createKey(db, { org: 'demo', name: `demo ${new Date().toISOString()}` })
      this.log(`Database ${config.db} is ready; demo organization "demo".`)
      this.log(`API key (shown once):\n\n  ${key.key}\n`)
      const curl = `curl -H "Authorization: Bearer ${key.key}"`
      this.log(`Try: ${curl} ${config.baseUrl}/v1/fhir/r4/metadata`)
      this.log(`     ${curl} '${config.baseUrl}/v1/scheduling/slots?includePast=true&limit=2'\n`)
    } finally {
      db.close()
    }
    await runServerUntilSignalled(config, (line) => this.log(line), backgroundSync(flags, this.config.root))
  }

  /** The bundled SMART Scheduling Links example publisher, registered once and synced from disk. */
  private async loadScheduling(db: Db) {
    if (!findPublisher(db, DEMO_PUBLISHER)) {
      addPublisher(db, {
        slug: DEMO_PUBLISHER,
        displayName: 'SMART Scheduling Links examples',
        manifestUrl: join(this.config.root, 'data/demo/scheduling/smart-examples/$bulk-publish'),
      })
    }
    const [report] = await syncPublishers(db, { clock: Date.now, only: DEMO_PUBLISHER })
    if (report) this.log(`Publisher ${DEMO_PUBLISHER}: ${report.outcome}, ${report.written} slots written.`)
  }
}
