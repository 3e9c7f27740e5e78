import { render } from 'ink'
import type { Clock } from '../clock.js'
import { TopFeed } from '../stats/topFeed.js'
import type { TopSnapshot } from '../stats/topSnapshot.js'
import { App } from './App.js'
import { FrameScreen } from './screen.js'

/** The alternate screen with the cursor hidden, like htop; left as it was on the way out. */
const ENTER_ALTERNATE_SCREEN = '\u001b[?1049h\u001b[?25l'
const LEAVE_ALTERNATE_SCREEN = '\u001b[?25h\u001b[?1049l'

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
  const screen = new FrameScreen(process.stdout)
  process.stdout.write(ENTER_ALTERNATE_SCREEN)
  try {
    const app = render(
      <App
        database={options.dbPath}
        load={(filter) => feed.read(options.clock(), filter)}
        intervalMs={options.intervalMs}
      />,
      // debug: Ink writes each frame whole, and FrameScreen paints it over the screen (see screen.ts).
      { stdout: screen as unknown as NodeJS.WriteStream, debug: true, patchConsole: false },
    )
    await app.waitUntilExit()
  } finally {
    screen.close()
    process.stdout.write(LEAVE_ALTERNATE_SCREEN)
    feed.close()
  }
}
