import { render } from 'ink'
import type { Clock } from '../clock.js'
import { TopFeed } from '../stats/topFeed.js'
import type { TopSnapshot } from '../stats/topSnapshot.js'
import { App } from './App.js'

const ENTER_ALTERNATE_SCREEN = '\u001b[?1049h'
const LEAVE_ALTERNATE_SCREEN = '\u001b[?1049l'

/** One snapshot of the store at `dbPath` (waiting state when it does not exist yet). */
export function readSnapshot(dbPath: string, now: number): TopSnapshot {
  const feed = new TopFeed(dbPath)
  try {
    return feed.read(now)
  } finally {
    feed.close()
  }
}

/** The live screen, refreshed every `intervalMs`, on the terminal's alternate screen like htop; resolves on `q`. */
export async function runTop(options: { dbPath: string; clock: Clock; intervalMs: number }): Promise<void> {
  const feed = new TopFeed(options.dbPath)
  process.stdout.write(ENTER_ALTERNATE_SCREEN)
  try {
    const app = render(
      <App
        database={options.dbPath}
        load={(filter) => feed.read(options.clock(), filter)}
        intervalMs={options.intervalMs}
      />,
      { incrementalRendering: true },
    )
    await app.waitUntilExit()
  } finally {
    process.stdout.write(LEAVE_ALTERNATE_SCREEN)
    feed.close()
  }
}
