import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importDirectory } from '../../src/directory/importer.js'
import { resolveSources } from '../../src/directory/sources.js'
import type { TestServer } from './harness.js'

/** The Plan-Net sample directory in shared/fixtures (a real-shaped national directory extract). */
export const PLAN_NET = fileURLToPath(new URL('../../../shared/fixtures/directory/plan-net', import.meta.url))

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
