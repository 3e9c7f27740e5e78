import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { packageRoot } from '../packageRoot.js'
import { HeldQuestionnaires } from './held.js'

/** The curated set: the published Questionnaires shipped in data/questionnaires (its README keeps their sources and terms). */
export const curatedDir = () => join(packageRoot(), 'data', 'questionnaires')

/**
 * Holds every curated Questionnaire the store lacks (by `url|version`, or id for one with no `url`), as its
 * bytes were published. Runs in a schema step when a database is created, and from `svc demo`.
 * Returns how many it added.
 */
export function loadCurated(db: Database.Database, now = new Date().toISOString()): number {
  const held = new HeldQuestionnaires(db)
  let added = 0
  for (const file of readdirSync(curatedDir())
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const bytes = readFileSync(join(curatedDir(), file))
    const resource = JSON.parse(bytes.toString()) as Record<string, unknown>
    if (held.holds(resource)) continue
    held.put({ bytes, resource, origin: 'curated', source: file }, now)
    added++
  }
  return added
}
