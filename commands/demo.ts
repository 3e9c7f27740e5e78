import { createKey } from '../src/accounts/keys.js'
import { loadDemoData } from '../src/app/demo.js'
import { openDatabase } from '../src/app/store.js'
import { SvcCommand } from '../src/cli/baseCommand.js'
import { runServerUntilSignalled } from '../src/cli/runServer.js'
import { backgroundSync, serveFlags, serveOverrides } from '../src/cli/serveFlags.js'

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
    const config = await this.resolveConfig(serveOverrides(flags))
    const sync = backgroundSync(flags)
    const db = openDatabase(config.db)
    try {
      for (const line of await loadDemoData(db, Date.now())) this.log(line)
    } finally {
      db.close()
    }
    // The key is made once the server listens: a demo that cannot listen leaves no key behind.
    await runServerUntilSignalled(config, {
      log: (line) => this.log(line),
      sync,
      onListening: (baseUrl) => this.log(demoKeyLines(config.db, baseUrl)),
    })
  }
}

/** A fresh key of the demo organization, and commands to try it with against `baseUrl`. */
function demoKeyLines(dbPath: string, baseUrl: string): string {
  const db = openDatabase(dbPath)
  try {
    const key = createKey(db, { org: 'demo', name: `demo ${new Date().toISOString()}` })
    const curl = `curl -H "Authorization: Bearer ${key.key}"`
    return [
      `Database ${dbPath} is ready; demo organization "demo".`,
      `API key (shown once):\n\n  ${key.key}\n`,
      `Try: ${curl} ${baseUrl}/v1/fhir/r4/metadata`,
      `     ${curl} '${baseUrl}/v1/scheduling/slots?limit=2'`,
      `     ${curl} '${baseUrl}/v1/fhir/r4/Practitioner?name=cormier'`,
      `     ${curl} '${baseUrl}/v1/fhir/r4/CodeSystem/$lookup?system=http://nucc.org/provider-taxonomy&code=207Q00000X'`,
      `     ${curl} '${baseUrl}/v1/fhir/r4/InsurancePlan?county=12031&_count=2'`,
      `     ${curl} '${baseUrl}/v1/fhir/r4/Questionnaire?code=88121-9'`,
      `API reference: ${baseUrl}/docs · dashboard: ${baseUrl}/dashboard (first operator: svc operators create <email>)\n`,
    ].join('\n')
  } finally {
    db.close()
  }
}
