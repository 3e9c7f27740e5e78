import { createWriteStream, mkdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { type DirectoryScale, generatedRelease } from './directoryData.js'

const PLAN_NET = fileURLToPath(new URL('../../test/fixtures/directory/plan-net', import.meta.url))

/**
 * Writes a generated release as NDJSON files, one per type. bench/directory.ts runs this file in a process of
 * its own (`<node and its loader flags> writeDirectoryFiles.ts <dir> <scale as JSON>`), so that what the
 * generator allocates never counts in the import's peak RSS.
 */
const [dir, scale] = process.argv.slice(2)
if (dir === undefined || scale === undefined)
  throw new Error('usage: writeDirectoryFiles.ts <dir> <scale JSON>')
mkdirSync(dir, { recursive: true })
for (const source of generatedRelease(PLAN_NET, JSON.parse(scale) as DirectoryScale))
  await pipeline(await source.open(), createWriteStream(join(dir, basename(source.name))))
