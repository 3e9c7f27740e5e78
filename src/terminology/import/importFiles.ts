import { createReadStream, readdirSync, statSync } from 'node:fs'
import { basename, dirname, extname, join, resolve } from 'node:path'
import type { Db } from '../../db/open.js'
import { delimitedRows } from '../../ingest/delimited.js'
import { readJsonDocument } from '../../ingest/json.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from '../../ingest/limits.js'
import { jsonLines } from '../../ingest/jsonLines.js'
import { linesOf } from '../../ingest/lines.js'
import { type Converted, fromFhirResource } from '../fhirResources.js'
import type { BadRecord, CodeSystemRelease, ValueSetRecord } from '../model.js'
import { writeCodeSystem, writeValueSet } from '../write.js'
import { NotNuccError, readNuccCsv } from './nucc.js'
import { openZip } from '../../ingest/zip.js'
import { readRxNorm, type RrfFile, type RxNormFiles, rxnormVersion } from './rxnorm.js'
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
const RXNCONSO = 'RXNCONSO.RRF'

/** What an import reads: FHIR and NUCC files one by one, and RxNorm releases (a folder or a zip) whole. */
type Input =
  { kind: 'file'; path: string } | { kind: 'rxnorm-folder'; path: string } | { kind: 'zip'; path: string }

const hasConso = (folder: string) => readdirSync(folder).some((name) => name.toUpperCase() === RXNCONSO)

function listInputs(paths: string[]): Input[] {
  const inputs: Input[] = []
  const walk = (path: string) => {
    let stats: ReturnType<typeof statSync>
    try {
      stats = statSync(path)
    } catch {
      throw new TerminologyImportError(`${path} does not exist`)
    }
    const extension = extname(path).toLowerCase()
    if (stats.isDirectory()) {
      if (hasConso(path)) inputs.push({ kind: 'rxnorm-folder', path: resolve(path) })
      for (const name of readdirSync(path).sort()) {
        const child = join(path, name)
        if (statSync(child).isDirectory() || EXTENSIONS.has(extname(name).toLowerCase())) walk(child)
      }
    } else if (EXTENSIONS.has(extension)) {
      inputs.push({ kind: 'file', path: resolve(path) })
    } else if (extension === '.zip') {
      inputs.push({ kind: 'zip', path: resolve(path) })
    } else if (basename(path).toUpperCase() === RXNCONSO) {
      inputs.push({ kind: 'rxnorm-folder', path: resolve(dirname(path)) })
    } else {
      throw new TerminologyImportError(
        `${path}: expected .json, .ndjson or .csv, an RxNorm release folder (with ${RXNCONSO}) or its zip`,
      )
    }
  }
  for (const path of paths) walk(path)
  return inputs
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

async function readFile(
  units: Units,
  file: string,
  release: string | undefined,
  limits: IngestLimits,
): Promise<void> {
  const version = fileRelease(file, release)
  const extension = extname(file).toLowerCase()
  const open = () => createReadStream(file, { highWaterMark: 1 << 20 })
  const tooLarge = `larger than ${describeMb(limits.maxRecordBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one record`
  if (extension === '.csv') {
    try {
      const rows = delimitedRows(open(), {
        limits,
        delimiter: ',',
        quoted: true,
        encoding: 'utf-8',
        onOversized: (line) => units.bad.push({ file, line, message: tooLarge }),
      })
      const { release: nucc, bad } = await readNuccCsv(rows, file, version)
      units.codeSystems.set(`${nucc.url}|${nucc.version}`, nucc)
      units.bad.push(...bad)
    } catch (error) {
      if (error instanceof NotNuccError) throw new TerminologyImportError(error.message)
      throw new TerminologyImportError(`${file}: not readable as CSV (${(error as Error).message})`)
    }
    return
  }
  if (extension === '.ndjson') {
    for await (const lines of linesOf(open(), limits)) {
      for (const { line, record } of jsonLines(lines, tooLarge)) {
        if ('problem' in record) units.bad.push({ file, line, message: record.problem })
        else takeResource(units, record.value, file, version, line)
      }
    }
    return
  }
  let resource: unknown
  try {
    resource = (await readJsonDocument(open(), file, limits.maxRecordBytes)).value
  } catch (error) {
    throw new TerminologyImportError((error as Error).message)
  }
  takeResource(units, resource, file, version)
}

/** The RRF file of a folder or zip by its name, any case. */
function rrfIn<T extends { name: string }>(members: readonly T[], name: string): T | undefined {
  return members.find((member) => basename(member.name).toUpperCase() === name)
}

async function readRxNormFiles(
  units: Units,
  files: RxNormFiles,
  names: string[],
  release: string | undefined,
  limits: IngestLimits,
): Promise<void> {
  const version = release ?? rxnormVersion(names)
  if (!version)
    throw new TerminologyImportError(
      `${files.origin}: no release date in its file names (NLM names them RxNorm_full_MMDDYYYY); give --release`,
    )
  const read = await readRxNorm(files, version, limits)
  units.codeSystems.set(`${read.release.url}|${read.release.version}`, read.release)
  units.bad.push(...read.bad)
}

async function readRxNormFolder(
  units: Units,
  folder: string,
  release: string | undefined,
  limits: IngestLimits,
) {
  const entries = readdirSync(folder)
  const file = (name: string): RrfFile | undefined => {
    const found = rrfIn(
      entries.map((entry) => ({ name: entry })),
      name,
    )
    if (!found) return undefined
    const path = join(folder, found.name)
    return { name: path, open: async () => createReadStream(path, { highWaterMark: 1 << 20 }) }
  }
  const files = {
    origin: folder,
    conso: file(RXNCONSO) as RrfFile,
    rel: file('RXNREL.RRF'),
    sat: file('RXNSAT.RRF'),
  }
  await readRxNormFiles(units, files, [folder, ...entries], release, limits)
}

async function readRxNormZip(units: Units, path: string, release: string | undefined, limits: IngestLimits) {
  const zip = await openZip(path).catch((error: Error) => {
    throw new TerminologyImportError(error.message)
  })
  try {
    const member = (name: string): RrfFile | undefined => {
      const found = rrfIn(zip.members, name)
      return found && { name: `${path}:${found.name}`, open: () => found.open() }
    }
    const conso = member(RXNCONSO)
    if (!conso)
      throw new TerminologyImportError(`${path}: no ${RXNCONSO} in the archive; not an RxNorm release`)
    const files = { origin: path, conso, rel: member('RXNREL.RRF'), sat: member('RXNSAT.RRF') }
    await readRxNormFiles(units, files, [path, ...zip.members.map((m) => m.name)], release, limits)
  } finally {
    zip.close()
  }
}

/** Every record of the files, read and checked; nothing is written yet. */
export interface TerminologyRead {
  files: string[]
  units: Units
}

/**
 * Reads FHIR CodeSystem and ValueSet resources (JSON, Bundle, NDJSON) and NUCC taxonomy CSV files, through
 * the input-safety layer (src/ingest): bad records are kept to report; a file that cannot be read as a whole
 * stops the import.
 */
export async function readTerminology(
  paths: string[],
  options: { release?: string; limits?: IngestLimits } = {},
): Promise<TerminologyRead> {
  const inputs = listInputs(paths)
  if (inputs.length === 0)
    throw new TerminologyImportError(
      `no .json, .ndjson or .csv file and no RxNorm release in ${paths.join(', ')}`,
    )
  const units: Units = { codeSystems: new Map(), valueSets: new Map(), skipped: [], bad: [] }
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  for (const input of inputs) {
    if (input.kind === 'file') await readFile(units, input.path, options.release, limits)
    else if (input.kind === 'zip') await readRxNormZip(units, input.path, options.release, limits)
    else await readRxNormFolder(units, input.path, options.release, limits)
  }
  return { files: inputs.map((input) => input.path), units }
}

/** Writes what was read in one transaction, each release replacing the release of the same URL and version. */
export function writeTerminology(db: Db, read: TerminologyRead, now: number): ImportSummary {
  const { files, units } = read
  db.transaction(() => {
    for (const release of units.codeSystems.values()) writeCodeSystem(db, release, now)
    for (const valueSet of units.valueSets.values()) writeValueSet(db, valueSet, now)
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

/**
 * Imports code systems and value sets: every file is read before anything is written; then every release is
 * written in one transaction. Bad records are reported and skipped; a file that cannot be read as a whole
 * stops the import and the store keeps its previous data.
 */
export async function importTerminology(
  db: Db,
  paths: string[],
  options: { release?: string; now: number; limits?: IngestLimits; signal?: AbortSignal },
): Promise<ImportSummary> {
  const read = await readTerminology(paths, options)
  if (options.signal?.aborted)
    throw new TerminologyImportError('the import was interrupted; nothing was written')
  return writeTerminology(db, read, options.now)
}
