import { Flags } from '@oclif/core'
import { createKey } from '../../src/accounts/keys.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'

export default class KeysCreate extends SvcCommand {
  static override description =
    'Create an API key for an organization; the secret is shown once and never again'
  static override examples = [
    '<%= config.bin %> keys create --org acme-health --name "booking app"',
    '<%= config.bin %> keys create --org acme-health --json',
  ]
  static override flags = {
    org: Flags.string({ required: true, description: 'organization slug' }),
    name: Flags.string({ description: 'a label to tell keys apart' }),
  }

  async run() {
    const { flags } = await this.parse(KeysCreate)
    const { db } = await this.openStore(flags)
    const created = createKey(db, { org: flags.org, name: flags.name })
    this.log(
      `Created key ${created.id} for ${created.org}. Store this secret now; it cannot be shown again:\n\n  ${created.key}\n`,
    )
    return created
  }
}
