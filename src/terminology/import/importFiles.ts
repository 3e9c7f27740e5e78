import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, resolve } from 'node:path'
import type { Db } from '../../db/open.js'
import { type Converted, fromFhirResource } from '../fhirResources.js'
import type { BadRecord, CodeSystemRelease, ValueSetRecord } from '../model.js'
import { writeCodeSystem, writeValueSet } from '../write.js'
import { NotNuccError, readNuccCsv } from './nucc.js'
import { UserError } from '../../userError.js'

/** A fault that stops the whole import (a path or a file that cannot be read as a whole). */
export class TerminologyImportError extends UserError {
  override name = 'TerminologyImportError'
}

export interface ImportSummary {
  files: string[]
  codeSystems: { url: string; version: string; concepts: number }[]
  valueSets: { url: string; version: string }[]
  skipped: string[]
  bad: BadRecord[]
}

const EXTENSIONS = new Set(['.json', '.ndjson', '.csv'])

function listFiles(paths: string[]): string[] {
  const files: string[] = []
  const walk = (path: string) => {
    let stats: ReturnType<typeof statSync>
    try {
      stats = statSync(path)
    } catch {
      throw new TerminologyImportError(`${path} does not exist`)
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        const child = join(path, name)
        if (statSync(child).isDirectory() || EXTENSIONS.has(extname(name).toLowerCase())) walk(child)
      }
    } else if (EXTENSIONS.has(extname(path).toLowerCase())) {
      files.push(resolve(path))
    } else {
      throw new TerminologyImportError(`${path}: expected .json, .ndjson or .csv`)
    }
  }
  for (const path of paths) walk(path)
  return files
}

/** The release of a file whose records carry no version: `--release`, else the file's date. */
function fileRelease(file: string, release: string | undefined): string {
  return release ?? statSync(file).mtime.toISOString().slice(0, 10)
}

interface Units {
  codeSystems: Map<string, CodeSystemRelease>
  valueSets: Map<string, ValueSetRecord>
  skipped: string[]
  bad: BadRecord[]
}

function take(units: Units, converted: Converted, where: Omit<BadRecord, 'message'>): void {
  switch (converted.kind) {
    case 'code-system': {
      const { release } = converted
      units.codeSystems.set(`${release.url}|${release.version}`, release)
      break
    }
    case 'value-set': {
      const { valueSet } = converted
      units.valueSets.set(`${valueSet.url}|${valueSet.version}`, valueSet)
      break
    }
    case 'skipped':
      units.skipped.push(converted.reason)
      break
    case 'bad':
      units.bad.push({ ...where, message: converted.message })
  }
}

/** One resource, or every entry of a Bundle. */
function takeResource(units: Units, resource: unknown, file: string, version: string, line?: number): void {
  const bundle = resource as { resourceType?: unknown; entry?: unknown }
  if (bundle?.resourceType === 'Bundle') {
    const entries = Array.isArray(bundle.entry) ? bundle.entry : []
    entries.forEach((entry: { resource?: unknown } | null, index) =>
      take(units, fromFhirResource(entry?.resource, file, version), { file, line, at: `entry[${index}]` }),
    )
    return
  }
  take(units, fromFhirResource(resource, file, version), { file, line })
}

function readFile(units: Units, file: string, release: string | undefined): void {
  const text = readFileSync(file, 'utf8')
  const version = fileRelease(file, release)
  const extension = extname(file).toLowerCase()
  if (extension === '.csv') {
    try {
      const { release: nucc, bad } = readNuccCsv(text, file, version)
      units.codeSystems.set(`${nucc.url}|${nucc.version}`, nucc)
      units.bad.push(...bad)
    } catch (error) {
      if (error instanceof NotNuccError) throw new TerminologyImportError(error.message)
      throw new TerminologyImportError(`${file}: not readable as CSV (${(error as Error).message})`)
    }
    return
  }
  if (extension === '.ndjson') {
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return
      try {
        takeResource(units, JSON.parse(line), file, version, index + 1)
      } catch (error) {
        units.bad.push({ file, line: index + 1, message: `not valid JSON (${(error as Error).message})` })
      }
    })
    return
  }
  let resource: unknown
  try {
    resource = JSON.parse(text)
  } catch (error) {
    throw new TerminologyImportError(`${file}: not valid JSON (${(error as Error).message})`)
  }
  takeResource(units, resource, file, version)
}

/**
 * Imports FHIR CodeSystem and ValueSet resources (JSON, Bundle, NDJSON) and NUCC taxonomy CSV files.
 * Every file is read before anything is written; then every release is written in one transaction, each
 * replacing the release of the same URL and version. Bad records are reported and skipped; a file that
 * cannot be read as a whole stops the import and the store keeps its previous data.
 */
export function importTerminology(
  db: Db,
  paths: string[],
  options: { release?: string; now: number },
): ImportSummary {
  const files = listFiles(paths)
  if (files.length === 0)
    throw new TerminologyImportError(`no .json, .ndjson or .csv file in ${paths.join(', ')}`)
  const units: Units = { codeSystems: new Map(), valueSets: new Map(), skipped: [], bad: [] }
  for (const file of files) readFile(units, file, options.release)
  db.transaction(() => {
    for (const release of units.codeSystems.values()) writeCodeSystem(db, release, options.now)
    for (const valueSet of units.valueSets.values()) writeValueSet(db, valueSet, options.now)
  }).immediate()
  return {
    files,
    codeSystems: [...units.codeSystems.values()].map(({ url, version, concepts }) => ({
      url,
      version,
      concepts: concepts.length,
    })),
    valueSets: [...units.valueSets.values()].map(({ url, version }) => ({ url, version })),
    skipped: units.skipped,
    bad: units.bad,
  }
}
