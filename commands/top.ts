import { Flags } from '@oclif/core'
import { SvcCommand } from '../src/cli/baseCommand.js'
import { clockFromEnv } from '../src/clock.js'

/** Width of the text snapshot when stdout is not a terminal: wide enough for request ids. */
const PIPE_COLUMNS = 120

export default class Top extends SvcCommand {
  static override description =
    'Watch the appliance live: traffic, latency, top endpoints and organizations, quota, errors, publishers'
  static override examples = [
    '<%= config.bin %> top',
    '<%= config.bin %> top --once',
    '<%= config.bin %> top --json | jq .quota',
  ]
  static override flags = {
    once: Flags.boolean({
      description: 'print one snapshot as text and exit (the default when not on a terminal)',
    }),
    interval: Flags.integer({ description: 'seconds between refreshes', default: 1, min: 1, max: 60 }),
  }

  async run() {
    const { flags } = await this.parse(Top)
    // React's development build checks every render, two to three times the work of a frame: the screen
    // runs the production build unless NODE_ENV says otherwise. React reads it when first imported, so the
    // TUI modules are imported here, after it is set.
    process.env.NODE_ENV ??= 'production'
    const { readSnapshot, runTop } = await import('../src/tui/run.js')
    const { snapshotText } = await import('../src/tui/Report.js')
    const { db } = await this.resolveConfig({ db: flags.db, config: flags.config })
    const clock = clockFromEnv()
    const interactive = process.stdout.isTTY && process.stdin.isTTY
    if (!this.jsonEnabled() && !flags.once && interactive) {
      await runTop({ dbPath: db, clock, intervalMs: flags.interval * 1000 })
      return undefined
    }
    const snapshot = readSnapshot(db, clock())
    this.log(snapshotText(snapshot, db, process.stdout.isTTY ? process.stdout.columns : PIPE_COLUMNS))
    return { database: db, ...snapshot }
  }
}
