import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A publisher's bulk-publish feed on disk: its Locations, Schedules and Slots as NDJSON files beside a
 * `$bulk-publish` manifest of `transactionTime` (a new one for each publication: an unchanged manifest is not
 * read again). Returns the manifest's path, as a publisher's address.
 */
export function writeBulkFeed(
  dir: string,
  feed: { transactionTime: number; locations: unknown[]; schedules: unknown[]; slots: unknown[] },
): string {
  mkdirSync(dir, { recursive: true })
  const files = [
    ['Location', 'locations.ndjson', feed.locations],
    ['Schedule', 'schedules.ndjson', feed.schedules],
    ['Slot', 'slots.ndjson', feed.slots],
  ] as const
  for (const [, name, records] of files)
    writeFileSync(join(dir, name), `${records.map((record) => JSON.stringify(record)).join('\n')}\n`)
  const manifest = join(dir, '$bulk-publish')
  writeFileSync(
    manifest,
    JSON.stringify({
      transactionTime: new Date(feed.transactionTime).toISOString(),
      output: files.map(([type, url]) => ({ type, url })),
    }),
  )
  return manifest
}
