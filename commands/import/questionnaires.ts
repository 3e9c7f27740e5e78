import { Args } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { ingestLimits } from '../../src/ingest/limits.js'
import {
  importQuestionnaires,
  type QuestionnairesImportSummary,
} from '../../src/questionnaires/importQuestionnaires.js'

export default class ImportQuestionnaires extends SvcCommand {
  static override description =
    'Import Questionnaires: FHIR R4 JSON files, Bundles of Questionnaires or NDJSON, from files, folders or http(s) ' +
    'addresses. Identity is url + version: the same url|version replaces what was held, another version sits ' +
    'beside it. Refused records are listed with their file and line (exit 1); a source that cannot be read ' +
    'changes nothing (exit 2).'
  static override examples = [
    '<%= config.bin %> import questionnaires ./forms/',
    '<%= config.bin %> import questionnaires ./phq9.json https://example.org/forms/bundle.json',
  ]
  static override strict = false
  static override args = {
    sources: Args.string({ required: true, description: 'files, folders or http(s) URLs' }),
  }

  async run(): Promise<QuestionnairesImportSummary> {
    const { argv, flags } = await this.parse(ImportQuestionnaires)
    const { db, config } = await this.openImportStore(flags)
    const summary = await importQuestionnaires(db, argv as string[], {
      limits: ingestLimits(config),
      onProblem: (problem) => {
        if (!flags.json) this.logToStderr(`${problem.source}:${problem.line}: ${problem.message}`)
      },
    })
    this.log(formatTable(summary.sources as never, ['source', 'read', 'written', 'replaced', 'refused']))
    const written = summary.sources.reduce((sum, source) => sum + source.written, 0)
    this.log(`${written} Questionnaires held; ${summary.refused} refused.`)
    if (summary.refused > 0) process.exitCode = 1
    return summary
  }
}
