import { Args } from '@oclif/core'
import { revokeKey } from '../../src/accounts/keys.js'
import { SvcCommand } from '../../src/cli/baseCommand.js'

export default class KeysRevoke extends SvcCommand {
  static override description = 'Revoke an API key; every running server refuses it from its next request'
  static override examples = ['<%= config.bin %> keys revoke key_3f9a0c1b2d4e5f60']
  static override args = { id: Args.string({ required: true, description: 'key id from `svc keys list`' }) }

  async run() {
    const { args, flags } = await this.parse(KeysRevoke)
    const { store } = await this.openStore(flags)
    const key = revokeKey(store, args.id)
    this.log(`Revoked key ${key.id} (${key.prefix}) of ${key.org}`)
    return key
  }
}
