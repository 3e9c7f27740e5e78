import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { DemoContext } from '../api/domain.js'
import type { Db } from '../db/open.js'
import { packageRoot } from '../packageRoot.js'
import { addPublisher, findPublisher, removePublisher } from './publishers.js'
import { type SyncReport, syncPublishers } from './sync/syncPublisher.js'

const DEMO_PUBLISHER = 'smart-examples'
const BUNDLED_FEED = join(packageRoot(), 'data', 'scheduling', DEMO_PUBLISHER)
const MANIFEST = '$bulk-publish'
const WEEK_MS = 7 * 86_400_000
/** A Monday, 00:00 UTC: weeks are counted from it. */
const A_MONDAY = Date.UTC(1970, 0, 5)

interface ManifestOutput {
  type: string
  url: string
}

/** The domain's demo step: the bundled examples, synced from a copy beside the main file. */
export async function schedulingDemo({ db, dataDir, now }: DemoContext): Promise<string[]> {
  const report = await loadDemoScheduling(db, join(dataDir, 'demo-feed'), now)
  if (!report) return []
  if (report.outcome === 'synced')
    return [`Scheduling: publisher ${report.publisher} synced, ${report.written} slots.`]
  // Not synced again (a demo started again within the minute): say what it still holds, not 0 written.
  const held = db.prepare('SELECT slot_count FROM publishers WHERE slug = ?').pluck().get(report.publisher)
  return [
    `Scheduling: publisher ${report.publisher} ${report.outcome} (${report.message}), ${held ?? 0} slots held.`,
  ]
}

/**
 * The bundled SMART Scheduling Links examples (data/scheduling), registered once and synced from a copy made in
 * `feedDir` whose dates start this week (see writeCurrentDemoFeed).
 */
export async function loadDemoScheduling(
  db: Db,
  feedDir: string,
  now: number,
): Promise<SyncReport | undefined> {
  const manifestUrl = await writeCurrentDemoFeed(BUNDLED_FEED, feedDir, now)
  const registered = findPublisher(db, DEMO_PUBLISHER)
  // A store made by an earlier demo points at the bundled files, whose slots are all past.
  if (registered && registered.manifestUrl !== manifestUrl) removePublisher(db, DEMO_PUBLISHER)
  if (!findPublisher(db, DEMO_PUBLISHER)) {
    addPublisher(
      db,
      {
        slug: DEMO_PUBLISHER,
        displayName: 'SMART Scheduling Links examples (dates moved to this week)',
        manifestUrl,
      },
      now,
    )
  }
  const [report] = await syncPublishers(db, { clock: () => now, only: DEMO_PUBLISHER })
  return report
}

/**
 * The examples were published for March 2021, so every one of their slots is past and a search from now finds
 * nothing. This writes a copy of the feed to `target` with every slot moved by the same whole number of weeks,
 * so that the feed's first week is the week of `now` (weekdays and times of day stay as published), and returns
 * the copy's manifest path.
 */
export async function writeCurrentDemoFeed(source: string, target: string, now: number): Promise<string> {
  const manifest = JSON.parse(await readFile(join(source, MANIFEST), 'utf8')) as {
    transactionTime: string
    output: ManifestOutput[]
  }
  const files = await Promise.all(
    manifest.output.map(async (output) => ({
      output,
      lines: (await readFile(join(source, output.url), 'utf8')).split('\n').filter((line) => line !== ''),
    })),
  )
  const slots = files.filter(({ output }) => output.type === 'Slot')
  const starts = slots.flatMap(({ lines }) =>
    lines.map((line) => Date.parse(JSON.parse(line).start as string)),
  )
  const shift = weekStart(now) - weekStart(Math.min(...starts))
  const moved = (iso: string) => new Date(Date.parse(iso) + shift).toISOString()

  await mkdir(target, { recursive: true })
  let week = 0
  const output: ManifestOutput[] = []
  for (const { output: file, lines } of files) {
    if (file.type !== 'Slot') {
      await writeFile(join(target, file.url), lines.join('\n') + '\n')
      output.push(file)
      continue
    }
    const url = `slots-week-${++week}.ndjson`
    const shifted = lines.map((line) => {
      const slot = JSON.parse(line) as { start: string; end: string }
      return JSON.stringify({ ...slot, start: moved(slot.start), end: moved(slot.end) })
    })
    await writeFile(join(target, url), shifted.join('\n') + '\n')
    output.push({ ...file, url })
  }
  const manifestPath = join(target, MANIFEST)
  // Written last: a reader never finds a manifest naming files not yet written.
  await writeFile(
    manifestPath,
    JSON.stringify({ ...manifest, transactionTime: new Date(now).toISOString(), output }, null, 2),
  )
  return manifestPath
}

function weekStart(time: number): number {
  return A_MONDAY + Math.floor((time - A_MONDAY) / WEEK_MS) * WEEK_MS
}
