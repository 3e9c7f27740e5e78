import { Flags } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { heldListing } from '../../src/questionnaires/listing.js'

export default class QuestionnairesList extends SvcCommand {
  static override description =
    'List the Questionnaires held, each with its origin: curated (bundled), file or address (imported), fetched (from a configured source)'
  static override examples = [
    '<%= config.bin %> questionnaires list',
    '<%= config.bin %> questionnaires list --fetched --json',
  ]
  static override flags = {
    fetched: Flags.boolean({ description: 'only those fetched from configured sources' }),
  }

  async run() {
    const { flags } = await this.parse(QuestionnairesList)
    const { db } = await this.openStore(flags, { reads: true })
    const held = heldListing(db, { fetched: flags.fetched })
    this.log(
      held.length === 0
        ? 'No Questionnaires held.'
        : formatTable(
            held.map((row) => ({ ...row, url: row.url ?? '(no url)', version: row.version ?? '' })) as never,
            ['id', 'url', 'version', 'status', 'origin', 'source', flags.fetched ? 'checkedAt' : 'heldAt'],
          ),
    )
    return held
  }
}
