import { Args } from '@oclif/core'
import { setPublisherEnabled } from './publishers.js'
import { SvcCommand } from '../cli/baseCommand.js'

/** `publishers enable` and `publishers disable` differ only in the state they set. */
export function publisherToggle(enabled: boolean) {
  const verb = enabled ? 'enable' : 'disable'
  return class extends SvcCommand {
    static override description = `${enabled ? 'Enable' : 'Disable'} a publisher (${enabled ? 'synced and served again' : 'kept, but not synced'})`
    static override examples = [`<%= config.bin %> publishers ${verb} acme`]
    static override args = { slug: Args.string({ required: true, description: 'publisher slug' }) }

    async run() {
      const { args, flags } = await this.parse(
        this.constructor as typeof SvcCommand & { args: { slug: ReturnType<typeof Args.string> } },
      )
      const { db } = await this.openStore(flags as { db?: string })
      const publisher = setPublisherEnabled(db, args.slug as string, enabled)
      this.log(`Publisher ${publisher.slug} ${enabled ? 'enabled' : 'disabled'}`)
      return publisher
    }
  }
}
