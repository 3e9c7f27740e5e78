import { Args } from '@oclif/core'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { progressLine } from '../../src/cli/progress.js'
import { importDirectory } from '../../src/directory/importer.js'
import type { ImportSummary } from '../../src/fhir/store/importer.js'
import { ingestLimits } from '../../src/ingest/limits.js'
import { resolveSources } from '../../src/ingest/sources.js'
import { interruptible } from '../../src/cli/interrupts.js'

const SHOWN_PROBLEMS = 50

export default class ImportDirectory extends SvcCommand {
  static override description =
    'Import a provider directory release (FHIR NDJSON or JSON/Bundles; plain, .gz or .zst; files, directories or URLs). ' +
    'The release replaces the previous one in one step, or nothing changes; bad records are reported and skipped.'
  static override examples = [
    '<%= config.bin %> import directory ./plan-net/',
    '<%= config.bin %> import directory Practitioner.ndjson.zst PractitionerRole.ndjson.zst Organization.ndjson.gz',
    '<%= config.bin %> import directory https://example.org/directory/Practitioner.ndjson.zst',
  ]
  static override strict = false
  static override args = {
    sources: Args.string({
      required: true,
      description: 'files, directories or http(s) URLs of one release',
    }),
  }

  async run(): Promise<ImportSummary> {
    const { argv, flags } = await this.parse(ImportDirectory)
    const { db, config } = await this.openImportStore(flags)
    const limits = ingestLimits(config)
    const sources = await resolveSources(argv as string[], { limits })
    const progress = progressLine(process.stderr)
    let shown = 0
    const summary = await interruptible(
      (signal) =>
        importDirectory(db, sources, {
          limits,
          signal,
          onProgress: ({ source, records, imported, skipped }) =>
            progress.update(
              `${source}: ${records.toLocaleString('en-US')} records, ${imported.toLocaleString('en-US')} imported, ${skipped} skipped`,
            ),
          onProblem: (problem) => {
            if (flags.json || ++shown > SHOWN_PROBLEMS) return
            progress.clear()
            this.logToStderr(`${problem.source}:${problem.line}: ${problem.message} (skipped)`)
          },
        }),
      (line) => {
        progress.clear()
        this.logToStderr(line)
      },
    )
    progress.clear()
    if (summary.skipped > SHOWN_PROBLEMS && !flags.json)
      this.logToStderr(`… ${summary.skipped - SHOWN_PROBLEMS} more skipped records (see --json)`)
    const rows = Object.entries(summary.types)
      .filter(([, counts]) => counts.imported + counts.skipped > 0)
      .map(([type, counts]) => ({ type, imported: counts.imported, skipped: counts.skipped }))
    for (const [type, count] of Object.entries(summary.ignored))
      rows.push({ type: `${type} (not a directory type)`, imported: 0, skipped: count })
    this.log(formatTable(rows, ['type', 'imported', 'skipped']))
    if (summary.typeFaults.length > 0) {
      this.log('Not valid R4 (kept and served as published; numbers and booleans searched as their text):')
      for (const fault of summary.typeFaults) this.log(`  ${fault.text}`)
    }
    const seconds = summary.durationMs / 1000
    this.log(
      `Release ${summary.release} is live: ${summary.imported.toLocaleString('en-US')} resources in ${seconds.toFixed(1)} s ` +
        `(${Math.round(summary.imported / Math.max(seconds, 0.001)).toLocaleString('en-US')}/s), ${summary.skipped} bad records skipped.`,
    )
    return summary
  }
}
