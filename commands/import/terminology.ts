import { Args, Flags } from '@oclif/core'
import { SvcCommand } from '../../src/cli/baseCommand.js'
import { interruptible } from '../../src/cli/interrupts.js'
import { ingestLimits } from '../../src/ingest/limits.js'
import { importTerminology } from '../../src/terminology/import/importFiles.js'
import { describeBadRecord } from '../../src/terminology/model.js'

export default class ImportTerminology extends SvcCommand {
  static override description =
    'Import code systems and value sets: FHIR CodeSystem/ValueSet JSON, Bundles, NDJSON, and the NUCC taxonomy CSV. ' +
    'Each code system release (its version, else --release, else the file date) replaces the same release atomically.'
  static override examples = [
    '<%= config.bin %> import terminology ./nucc_taxonomy_250.csv --release 25.0',
    '<%= config.bin %> import terminology ./codesystems/ ./extra-valuesets.ndjson',
  ]
  static override strict = false
  static override args = {
    sources: Args.string({ required: true, description: 'files or folders of code systems and value sets' }),
  }
  static override flags = {
    release: Flags.string({
      description: 'release name for records that carry no version (default: the date of the file)',
    }),
  }

  async run() {
    const { argv, flags } = await this.parse(ImportTerminology)
    const paths = argv as string[]
    const { db, config } = await this.openImportStore(flags)
    const summary = await interruptible(
      (signal) =>
        importTerminology(db, paths, {
          release: flags.release,
          now: Date.now(),
          limits: ingestLimits(config),
          signal,
        }),
      (line) => this.logToStderr(line),
    )
    for (const bad of summary.bad) this.logToStderr(`skipped ${describeBadRecord(bad)}`)
    for (const system of summary.codeSystems) {
      this.log(`code system ${system.url} release ${system.version}: ${system.concepts} codes`)
    }
    this.log(
      `Imported ${summary.codeSystems.length} code system release(s) and ${summary.valueSets.length} value set(s) ` +
        `from ${summary.files.length} file(s); ${summary.bad.length} bad record(s) skipped.`,
    )
    return { ...summary, bad: summary.bad.map((bad) => ({ ...bad, text: describeBadRecord(bad) })) }
  }
}
