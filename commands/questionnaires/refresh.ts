import { Flags } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { refreshFetched } from '../../src/questionnaires/refresh.js'

export default class QuestionnairesRefresh extends SvcCommand {
  static override description =
    'Revalidate the Questionnaires fetched from configured sources (conditional requests: a 304 keeps the copy, a new answer replaces it, a 404 drops it); exit 1 when a source failed'
  static override examples = [
    '<%= config.bin %> questionnaires refresh',
    '<%= config.bin %> questionnaires refresh --url https://forms.example.org/Questionnaire/intake',
  ]
  static override flags = {
    url: Flags.string({ description: 'only this canonical URL' }),
  }

  async run() {
    const { flags } = await this.parse(QuestionnairesRefresh)
    const { db, config } = await this.openStore(flags)
    const outcomes = await refreshFetched(db, config, flags.url)
    this.log(
      outcomes.length === 0
        ? 'No fetched Questionnaires to refresh.'
        : formatTable(outcomes as never, ['url', 'outcome']),
    )
    if (outcomes.some((outcome) => outcome.outcome.startsWith('failed'))) process.exitCode = 1
    return outcomes
  }
}
