import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { listPublishers } from '../../src/scheduling/publishers.js'

export default class PublishersList extends SvcCommand {
  static override description = 'List slot publishers'
  static override examples = ['<%= config.bin %> publishers list --json']

  async run() {
    const { flags } = await this.parse(PublishersList)
    const { db } = await this.openStore(flags, { reads: true })
    const publishers = listPublishers(db)
    this.log(
      publishers.length === 0
        ? 'No publishers yet'
        : formatTable(publishers as never, ['slug', 'displayName', 'enabled', 'manifestUrl']),
    )
    return publishers
  }
}
