import type { Db } from '../db/open.js'
import { type ImportOptions, type ImportSummary, importRelease } from '../fhir/store/importer.js'
import type { ImportSource } from '../ingest/sources.js'
import { DIRECTORY_LAYOUT, type DirectoryType } from './declaration.js'

/** Imports one release of the provider directory (see src/fhir/store/importer.ts); other types are counted and left out. */
export function importDirectory(
  db: Db,
  sources: readonly ImportSource[],
  options: ImportOptions = {},
): Promise<ImportSummary<DirectoryType>> {
  return importRelease(db, DIRECTORY_LAYOUT, sources, options) as Promise<ImportSummary<DirectoryType>>
}
