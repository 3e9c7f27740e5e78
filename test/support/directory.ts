import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { importDirectory } from '../../src/directory/importer.js'
import { resolveSources } from '../../src/ingest/sources.js'
import { PLAN_NET } from './fixtures.js'
import type { TestServer } from './harness.js'

export { PLAN_NET }

/** The fixture's resources of one type, parsed, to compute expected answers independently of the store. */
export function fixture(type: string): any[] {
  return readFileSync(join(PLAN_NET, `${type}.ndjson`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
}

export async function importPlanNet(t: TestServer) {
  return importDirectory(t.server.db, await resolveSources([PLAN_NET]))
}
