import { Flags } from '@oclif/core'
import { clockFromEnv } from '../../src/clock.js'
import { formatTable, SvcCommand } from '../../src/cli/baseCommand.js'
import { interruptible } from '../../src/cli/interrupts.js'
import { ingestLimits } from '../../src/ingest/limits.js'
import { syncPublishers } from '../../src/scheduling/sync/syncPublisher.js'

export default class ImportPublishers extends SvcCommand {
  static override description =
    'Sync SMART Scheduling Links publishers: fetch each manifest and replace its slots in one transaction'
  static override examples = [
    '<%= config.bin %> import publishers',
    '<%= config.bin %> import publishers --publisher acme --json',
  ]
  static override flags = {
    publisher: Flags.string({ description: 'sync only this publisher (default: every enabled one)' }),
  }

  async run() {
    const { flags } = await this.parse(ImportPublishers)
    const { db, config } = await this.openImportStore(flags)
    const tty = process.stderr.isTTY && !this.jsonEnabled()
    const reports = await interruptible(
      (signal) =>
        syncPublishers(db, {
          clock: clockFromEnv(),
          only: flags.publisher,
          limits: ingestLimits(config),
          signal,
          // This process yields to serving (openImportStore); its parsing thread, whose work it takes over when
          // that thread is starved, runs only on CPU time nothing else wants.
          parseOnIdleCpu: true,
          onProgress: tty
            ? (slug, read) => process.stderr.write(`\r${slug}: ${read} records read`)
            : undefined,
        }),
      (line) => this.logToStderr(`${tty ? '\r\u001b[K' : ''}${line}`),
    )
    if (tty) process.stderr.write('\r\u001b[K')
    for (const report of reports) {
      for (const problem of report.problems) this.warn(`${problem.file}:${problem.line}: ${problem.message}`)
      if (report.skipped > report.problems.length) {
        this.warn(
          `${report.publisher}: ${report.skipped - report.problems.length} more bad records not listed`,
        )
      }
    }
    this.log(
      formatTable(
        reports.map((report) => ({ ...report, time: `${(report.ms / 1000).toFixed(2)}s` })),
        ['publisher', 'outcome', 'read', 'written', 'skipped', 'time', 'message'],
      ),
    )
    if (reports.some((report) => report.outcome === 'failed')) process.exitCode = 1
    return reports
  }
}
