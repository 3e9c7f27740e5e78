import { Args, Flags } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { interruptible } from '../../src/cli/interrupts.js'
import { progressLine } from '../../src/cli/progress.js'
import { ingestLimits } from '../../src/ingest/limits.js'
import { importPlans, type PlansImportSummary } from '../../src/plans/import/importPlans.js'

const SHOWN_PROBLEMS = 50

export default class ImportPlans extends SvcCommand {
  static override description =
    'Import federal plan files: ACA Exchange PUFs (Plan Attributes, Benefits and Cost Sharing, Service Area, Network) ' +
    'and Medicare Advantage PBP files (Section A, PlanArea) or the MA landscape file; CSV or tab-delimited, plain, ' +
    'gzipped or in zips (read in place), files, folders or URLs. Each file is recognised by its header. Each program ' +
    'and plan year the files hold replaces that release whole; the others stay served; or nothing changes.'
  static override examples = [
    '<%= config.bin %> import plans ./plan-attributes-puf.zip ./benefits-and-cost-sharing-puf.zip ./service-area-puf.zip ./network-puf.zip',
    '<%= config.bin %> import plans ./pbp-benefits-2027.zip --release ma-2027-october',
    '<%= config.bin %> import plans https://download.cms.gov/marketplace-puf/2026/plan-attributes-puf.zip',
  ]
  static override strict = false
  static override args = {
    sources: Args.string({ required: true, description: 'files, folders, zips or http(s) URLs' }),
  }
  static override flags = {
    release: Flags.string({
      description: 'release name the plans carry in meta.source (default: aca-<year> or ma-<year>)',
    }),
    'plan-year': Flags.integer({
      description:
        'contract year of PBP files that name none (no contract_year column, no year in their path)',
      min: 2000,
      max: 2100,
    }),
  }

  async run(): Promise<PlansImportSummary> {
    const { argv, flags } = await this.parse(ImportPlans)
    const { db, config } = await this.openImportStore(flags)
    const progress = progressLine(process.stderr)
    let shown = 0
    const summary = await interruptible(
      (signal) =>
        importPlans(db, argv as string[], {
          release: flags.release,
          planYear: flags['plan-year'],
          limits: ingestLimits(config),
          signal,
          onProgress: ({ file, rows }) => progress.update(`${file}: ${rows.toLocaleString('en-US')} rows`),
          onProblem: (problem) => {
            if (flags.json || ++shown > SHOWN_PROBLEMS) return
            progress.clear()
            this.logToStderr(
              `${problem.file}${problem.line > 0 ? `:${problem.line}` : ''}: ${problem.message}${problem.refused ? '' : ' (note)'}`,
            )
          },
        }),
      (line) => {
        progress.clear()
        this.logToStderr(line)
      },
    )
    progress.clear()
    if (summary.problemCount > SHOWN_PROBLEMS && !flags.json)
      this.logToStderr(`… ${summary.problemCount - SHOWN_PROBLEMS} more (see --json)`)
    this.log(
      formatTable(
        summary.files.map((file) => ({ ...file, layout: file.layout ?? 'not a plan file (skipped)' })),
        ['file', 'layout', 'rows', 'plans', 'refused'],
      ),
    )
    for (const partition of summary.partitions)
      this.log(
        `${partition.program === 'qhp' ? 'ACA' : 'Medicare Advantage'} ${partition.year}: ${partition.plans.toLocaleString('en-US')} plans as release "${partition.release}"${partition.replaced > 0 ? ` (replacing ${partition.replaced.toLocaleString('en-US')})` : ''}`,
      )
    for (const kept of summary.kept)
      this.log(
        `${kept.program === 'qhp' ? 'ACA' : 'Medicare Advantage'} ${kept.year}: kept as it was (release "${kept.release}", ${kept.plans} plans)`,
      )
    this.log(
      `Plans release ${summary.release} is live, in ${(summary.durationMs / 1000).toFixed(1)} s; ${summary.refused.toLocaleString('en-US')} rows refused.`,
    )
    return summary
  }
}
