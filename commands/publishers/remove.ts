import { Args } from '@oclif/core'
import { SvcCommand } from '../../src/cli/baseCommand.js'
import { removePublisher } from '../../src/scheduling/publishers.js'

export default class PublishersRemove extends SvcCommand {
  static override description = 'Remove a publisher and all of its data in one step'
  static override examples = ['<%= config.bin %> publishers remove acme']
  static override args = { slug: Args.string({ required: true, description: 'publisher slug' }) }

  async run() {
    const { args, flags } = await this.parse(PublishersRemove)
    const { db } = await this.openStore(flags)
    removePublisher(db, args.slug)
    this.log(`Removed publisher ${args.slug}`)
    return { slug: args.slug, removed: true }
  }
}
