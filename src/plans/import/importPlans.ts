import { dirname } from 'node:path'
import type { Db } from '../../db/open.js'
import { ImportError, liveReleaseRecords, ReleaseBuild } from '../../fhir/store/releaseBuild.js'
import { usCounties } from '../../geo/counties.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from '../../ingest/limits.js'
import { UserError } from '../../userError.js'
import { PARTITION_PARAM, PLANS_LAYOUT } from '../declaration.js'
import { partitionKey, type Program } from '../vocabulary.js'
import { buildAcaPlans } from './aca.js'
import type { BuildContext } from './build.js'
import type { Layout } from './layouts.js'
import { buildMaPlans } from './ma.js'
import { planFiles } from './planFiles.js'
import { stager } from './stage.js'
import { Staging } from './staging.js'
import { openTable, rowReader } from './tables.js'

export interface PlanProblem {
  file: string
  /** 1-based line in the file (0: the file as a whole). */
  line: number
  message: string
  /** A refused row is left out; a note says how a row was read (a cost kept as text, a missing network). */
  refused: boolean
}

export interface PlanFileSummary {
  file: string
  /** The layout it was read as; undefined when it is not a file the import maps (then skipped). */
  layout?: string
  rows: number
  /** Plans written that hold something of this file. */
  plans: number
  refused: number
}

export interface PartitionSummary {
  program: Program
  year: number
  release: string
  plans: number
  /** Plans of the same program and year served before, now replaced. */
  replaced: number
}

export interface PlansImportSummary {
  release: number
  files: PlanFileSummary[]
  partitions: PartitionSummary[]
  /** Partitions served before and kept as they were. */
  kept: { program: Program; year: number; release: string; plans: number }[]
  problems: PlanProblem[]
  problemCount: number
  refused: number
  durationMs: number
}

export interface PlansImportOptions {
  /** The release name every partition built carries (`meta.source`); derived (`aca-2025`) when absent. */
  release?: string
  /** The contract year of PBP files that say none (no contract_year, no year in their path). */
  planYear?: number
  limits?: IngestLimits
  signal?: AbortSignal
  now?: () => number
  onProgress?: (progress: { file: string; rows: number }) => void
  onProblem?: (problem: PlanProblem) => void
}

export const RELEASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

const MAX_KEPT_PROBLEMS = 1000
const PROGRESS_EVERY = 20_000
const DERIVED_NAMES: Record<Program, string> = { qhp: 'aca', ma: 'ma' }

/** A year in a file's path (`pbp-benefits-2027.zip`, `pbp-2027/`): PBP files carry none of their own. */
function yearInPath(name: string): number | undefined {
  const years = [...name.matchAll(/(?:^|[^0-9])(20\d{2})(?=[^0-9]|$)/g)].map((match) => Number(match[1]))
  return years.at(-1)
}

interface PartitionRow {
  program: Program
  year: number
  name: string
  files: string
  plans: number
  imported_at: string
}

/**
 * Imports federal plan files (ACA Exchange PUFs, Medicare Advantage PBP and landscape files): every file is
 * recognised by its header and staged; then each program-year the files hold is built as a partition of a
 * new release of the store, the live release's other partitions carried over as they were, and the new
 * release goes live in one commit. Any failure leaves the plans served as they were.
 */
export async function importPlans(
  db: Db,
  inputs: readonly string[],
  options: PlansImportOptions = {},
): Promise<PlansImportSummary> {
  const now = options.now ?? Date.now
  const started = now()
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  if (options.release !== undefined && !RELEASE_NAME.test(options.release))
    throw new ImportError(
      `--release "${options.release}" must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit`,
    )
  const workDir = dirname(db.name)
  const { files, close } = await planFiles(inputs, { limits, workDir, signal: options.signal })
  const staging = new Staging(workDir)
  const summaries: PlanFileSummary[] = files.map((file) => ({
    file: file.name,
    rows: 0,
    plans: 0,
    refused: 0,
  }))
  const problems: (PlanProblem & { order: number })[] = []
  let problemCount = 0
  const report = (file: number, line: number, message: string, refused: boolean, rows = 1) => {
    problemCount++
    const summary = summaries[file] as PlanFileSummary
    if (refused) summary.refused += rows
    const problem = { file: summary.file, line, message, refused }
    if (problems.length < MAX_KEPT_PROBLEMS) problems.push({ ...problem, order: file })
    options.onProblem?.(problem)
  }
  let build: ReleaseBuild | undefined
  try {
    const layouts = new Map<number, Layout>()
    for (const [index, file] of files.entries()) await stageFile(index, file.name)

    async function stageFile(index: number, name: string): Promise<void> {
      const summary = summaries[index] as PlanFileSummary
      const tooLarge = `larger than ${describeMb(limits.maxRecordBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one row`
      const table = await openTable(files[index] as (typeof files)[number], limits, (line) =>
        report(index, line, tooLarge, true),
      )
      if ('unrecognised' in table) return
      const { layout, columns } = table
      layouts.set(index, layout)
      summary.layout = layout.title
      const rows = table.rows[Symbol.asyncIterator]()
      const first = await rows.next()
      const firstRow = first.done ? undefined : rowReader(columns, first.value.fields)
      const missing = layout.needs.filter((column) => !columns.has(column))
      if (missing.length > 0) {
        const year = layout.yearColumn && firstRow ? firstRow(layout.yearColumn) : ''
        const which = /^\d{4}$/.test(year)
          ? `the ${year} ${layout.title} layout`
          : `the ${layout.title} layout`
        throw new ImportError(
          `${name}: no column ${missing.map((column) => `"${column}"`).join(', ')}, which ${which} needs (read by header name: columns may move, not go); nothing changed`,
        )
      }
      const pathYear = yearInPath(name) ?? options.planYear
      const stage = stager(layout.kind, {
        staging,
        file: index,
        columns: [...columns.keys()],
        pathYear: layout.kind === 'pbp-section-a' || layout.kind === 'pbp-plan-area' ? pathYear : undefined,
        refuse: (line, message) => report(index, line, message, true),
      })
      staging.db.exec('BEGIN')
      try {
        for (let next = first; !next.done; next = await rows.next()) {
          summary.rows++
          stage(rowReader(columns, next.value.fields), next.value.line)
          if (summary.rows % PROGRESS_EVERY === 0) {
            options.onProgress?.({ file: name, rows: summary.rows })
            if (options.signal?.aborted) throw new ImportError('plans import interrupted')
          }
        }
      } catch (error) {
        if (error instanceof UserError) throw error
        throw new ImportError(
          `${name}: ${(error as Error).message} after line ${summary.rows + 1}; the plans are as they were`,
        )
      } finally {
        // Ended whatever happened (the staging file is thrown away on failure), unless SQLite ended it itself.
        if (staging.db.inTransaction) staging.db.exec('COMMIT')
      }
      options.onProgress?.({ file: name, rows: summary.rows })
    }

    staging.index()
    resolveMaYears(staging, options.planYear, summaries)
    const partitions = partitionsOf(staging)
    reportUnused(staging, partitions, (file, line, message, rows) => report(file, line, message, true, rows))
    if (partitions.length === 0)
      throw new ImportError(
        files.length === 0
          ? 'No plan files among the inputs (.csv, .txt, .zip); nothing changed'
          : 'The inputs hold no plans: no ACA Plan Attributes, PBP Section A or landscape file was recognised; nothing changed',
      )

    build = new ReleaseBuild(db, PLANS_LAYOUT, { sourceNames: [...inputs], startedAt: started })
    const replacing = new Set(partitions.map(({ program, year }) => partitionKey(program, year)))
    const before = build.replaces
      ? (db
          .prepare(
            'SELECT program, year, name, files, plans, imported_at FROM plans_partitions WHERE release = ?',
          )
          .all(build.replaces.id) as PartitionRow[])
      : []
    for (const record of liveReleaseRecords(db, PLANS_LAYOUT, PARTITION_PARAM)) {
      if (record.codes.some((code) => replacing.has(code))) continue
      const behind = build.add(
        record.type,
        record.id,
        JSON.parse(record.json) as Record<string, unknown>,
        { source: 0, line: 0 },
        record.json,
      )
      if (behind) await behind
    }

    const counties = new Map(usCounties().map((county) => [county.fips, county]))
    const built: PartitionSummary[] = []
    for (const { program, year } of partitions) {
      const release = options.release ?? `${DERIVED_NAMES[program]}-${year}`
      let plans = 0
      const context: BuildContext = {
        staging,
        year,
        release,
        fileNames: files.map((file) => file.label),
        counties,
        report: (file, line, message) => report(file, line, message, false),
        refuse: (file, line, message) => report(file, line, message, true),
        emit: (resource, origin, contributing, json) => {
          plans++
          for (const file of contributing) (summaries[file] as PlanFileSummary).plans++
          if (options.signal?.aborted) throw new ImportError('plans import interrupted')
          return (build as ReleaseBuild).add(
            'InsurancePlan',
            String(resource.id),
            resource,
            { source: origin.file, line: origin.line },
            json,
          )
        },
      }
      if (program === 'qhp') await buildAcaPlans(context)
      else await buildMaPlans(context)
      built.push({
        program,
        year,
        release,
        plans,
        replaced: before.find((row) => row.program === program && row.year === year)?.plans ?? 0,
      })
    }
    await build.finish((duplicate) =>
      report(
        duplicate.source,
        duplicate.line,
        `${duplicate.type}/${duplicate.id} is built twice; the first is kept`,
        true,
      ),
    )
    const finished = now()
    const kept = before.filter((row) => !replacing.has(partitionKey(row.program, row.year)))
    const release = build.release
    build.goLive({ partitions: built, kept: kept.length, problems: problemCount }, finished, {
      exclusive: true,
      alsoInCommit: () => {
        const insert = db.prepare(
          'INSERT INTO plans_partitions (release, program, year, name, files, plans, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        for (const row of kept)
          insert.run(release, row.program, row.year, row.name, row.files, row.plans, row.imported_at)
        for (const partition of built)
          insert.run(
            release,
            partition.program,
            partition.year,
            partition.release,
            JSON.stringify(summaries.filter((summary) => summary.plans > 0).map((summary) => summary.file)),
            partition.plans,
            new Date(finished).toISOString(),
          )
      },
    })
    problems.sort((a, b) => a.order - b.order || a.line - b.line)
    return {
      release,
      files: summaries,
      partitions: built,
      kept: kept.map(({ program, year, name, plans }) => ({ program, year, release: name, plans })),
      problems: problems.map(({ order: _, ...problem }) => problem),
      problemCount,
      refused: summaries.reduce((sum, summary) => sum + summary.refused, 0),
      durationMs: finished - started,
    }
  } catch (error) {
    await build?.abort(now())
    if (error instanceof UserError) throw error
    throw new ImportError(`Import failed, the plans are as they were: ${(error as Error).message}`)
  } finally {
    staging.close()
    await close()
  }
}

/** A PBP Section A file says no contract year: its plans' PlanArea rows do, or its path, or --plan-year. */
function resolveMaYears(
  staging: Staging,
  planYear: number | undefined,
  summaries: readonly PlanFileSummary[],
): void {
  const { db } = staging
  db.exec(`
    UPDATE ma_plan SET year = (
      SELECT a.year FROM ma_area a
      WHERE a.contract = ma_plan.contract AND a.plan = ma_plan.plan AND a.segment = ma_plan.segment AND a.year IS NOT NULL
      LIMIT 1)
    WHERE year IS NULL
  `)
  if (planYear !== undefined) db.prepare('UPDATE ma_plan SET year = ? WHERE year IS NULL').run(planYear)
  const unknown = db
    .prepare('SELECT DISTINCT file FROM ma_plan WHERE year IS NULL ORDER BY file')
    .pluck()
    .all() as number[]
  if (unknown.length > 0)
    throw new ImportError(
      `${unknown.map((file) => summaries[file]?.file).join(', ')}: no contract year (no PlanArea row of its plans, no year in its path); give --plan-year; nothing changed`,
    )
}

/** The partitions the staged rows can build: a program-year with its base file (Plan Attributes; Section A or landscape). */
function partitionsOf(staging: Staging): { program: Program; year: number }[] {
  const years = (sql: string) => staging.db.prepare(sql).pluck().all() as number[]
  return [
    ...years('SELECT DISTINCT year FROM variant ORDER BY year').map((year) => ({
      program: 'qhp' as const,
      year,
    })),
    ...years('SELECT DISTINCT year FROM ma_plan UNION SELECT DISTINCT year FROM ma_landscape ORDER BY 1').map(
      (year) => ({ program: 'ma' as const, year }),
    ),
  ]
}

/** Rows of a year no partition is built for (a Network file of another plan year, say): one line per file. */
function reportUnused(
  staging: Staging,
  partitions: readonly { program: Program; year: number }[],
  report: (file: number, line: number, message: string, rows: number) => void,
): void {
  const built = (program: Program) => partitions.filter((p) => p.program === program).map((p) => p.year)
  const base: Record<Program, string> = {
    qhp: 'ACA Plan Attributes file',
    ma: 'PBP Section A or landscape file',
  }
  for (const [table, program] of [
    ['benefit', 'qhp'],
    ['area', 'qhp'],
    ['network', 'qhp'],
    ['ma_area', 'ma'],
  ] as const) {
    const years = built(program)
    const unused = staging.db
      .prepare(
        `SELECT file, year, min(line) AS line, count(*) AS count FROM ${table}
         WHERE year IS NULL OR year NOT IN (${years.map(() => '?').join(', ') || 'NULL'})
         GROUP BY file, year ORDER BY file, year`,
      )
      .all(...years) as { file: number; year: number | null; line: number; count: number }[]
    for (const { file, year, line, count } of unused)
      report(
        file,
        line,
        `${count} row${count === 1 ? '' : 's'} of ${year ?? 'an unknown year'} (from this line on): this import has no ${base[program]} of that year, so they are left out`,
        count,
      )
  }
}
