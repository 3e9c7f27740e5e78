import { Flags } from '@oclif/core'
import { listKeys } from '../../src/accounts/keys.js'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'

export default class KeysList extends SvcCommand {
  static override description = 'List API keys (never their secrets)'
  static override examples = [
    '<%= config.bin %> keys list',
    '<%= config.bin %> keys list --org acme-health --json',
  ]
  static override flags = { org: Flags.string({ description: 'only this organization' }) }

  async run() {
    const { flags } = await this.parse(KeysList)
    const { store } = await this.openStore(flags, { reads: true })
    const keys = listKeys(store, flags.org)
    this.log(
      keys.length === 0
        ? 'No keys; create one with `svc keys create --org <slug>`'
        : formatTable(keys as never, ['id', 'prefix', 'org', 'name', 'createdAt', 'lastUsedAt', 'revokedAt']),
    )
    return keys
  }
}
