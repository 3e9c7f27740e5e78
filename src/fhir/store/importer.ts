import type { Db } from '../../db/open.js'
import { R4Types } from '../r4Types.js'
import { type TypeFaultLine, TypeFaultTally } from './typeFaults.js'
import { parseJsonRecord, readJsonDocument } from '../../ingest/json.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from '../../ingest/limits.js'
import { isBlank, linesOf, OVERSIZED } from '../../ingest/lines.js'
import { type ImportSource, SourceError } from '../../ingest/sources.js'
import { UserError } from '../../userError.js'
import { ImportError, ReleaseBuild } from './releaseBuild.js'
import type { StoreLayout } from './schema.js'
import { ID_PATTERN } from '../id.js'

export interface ImportProblem {
  source: string
  /** 1-based line of an NDJSON file, or entry of a Bundle. */
  line: number
  message: string
}

export interface ImportProgress {
  source: string
  records: number
  imported: number
  skipped: number
}

export interface ImportSummary<Type extends string = string> {
  release: number
  /** Per type the store holds: records stored and records skipped as bad. */
  types: Record<Type, { imported: number; skipped: number }>
  /** Resources of other types, counted and left out. */
  ignored: Record<string, number>
  imported: number
  skipped: number
  /** The first MAX_KEPT_PROBLEMS problems found, in source and line order; `skipped` counts them all. */
  problems: ImportProblem[]
  /** Values of another JSON type than R4's, and elements R4 does not define: kept as published, reported. */
  typeFaults: TypeFaultLine[]
  durationMs: number
}

export interface ImportOptions {
  onProblem?: (problem: ImportProblem) => void
  onProgress?: (progress: ImportProgress) => void
  /** Records per batch handed to the thread that writes the release file. */
  batchSize?: number
  now?: () => number
  limits?: IngestLimits
  /** Aborted (Ctrl-C, SIGTERM): the import stops, and its partial release goes with every file of it. */
  signal?: AbortSignal
}

const MAX_KEPT_PROBLEMS = 1000
const PROGRESS_EVERY = 20_000

/** A record as the source gives it: validated, typed, or the reason it is skipped. */
type Checked =
  | { kind: 'resource'; type: string; id: string; parsed: Record<string, unknown> }
  | { kind: 'ignored'; type: string }
  | { kind: 'bad'; message: string }

function check(layout: StoreLayout, parsed: unknown): Checked {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'bad', message: 'not a JSON object' }
  }
  const resource = parsed as Record<string, unknown>
  const type = resource.resourceType
  if (typeof type !== 'string' || type === '') return { kind: 'bad', message: 'no resourceType' }
  if (!layout.indexes.has(type)) return { kind: 'ignored', type }
  const id = resource.id
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    return { kind: 'bad', message: `${type}.id ${JSON.stringify(id)} does not match ${ID_PATTERN.source}` }
  }
  return { kind: 'resource', type, id, parsed: resource }
}

/**
 * Imports one release of a store from its sources into a new file of its own, then makes it the live one in a
 * single commit of the main file. This thread reads, parses and derives; a second one writes the file (see
 * BulkLoader), so each has a core. Any failure leaves the previous release serving and removes the new file.
 */
export async function importRelease(
  db: Db,
  layout: StoreLayout,
  sources: readonly ImportSource[],
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const now = options.now ?? Date.now
  const started = now()
  const store = layout.declaration.name
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  const build = new ReleaseBuild(db, layout, {
    sourceNames: sources.map((source) => source.name),
    startedAt: started,
    batchSize: options.batchSize,
  })
  const release = build.release
  const types: ImportSummary['types'] = Object.fromEntries(
    layout.declaration.types.map(({ type }) => [type, { imported: 0, skipped: 0 }]),
  )
  const ignored: Record<string, number> = {}
  const problems: (ImportProblem & { order: number })[] = []
  const sourceOrder = new Map(sources.map((source, index) => [source.name, index]))
  let skipped = 0
  let imported = 0
  let records = 0
  const r4 = new R4Types()
  const typeFaults = new TypeFaultTally()

  const problem = (source: string, line: number, message: string, type?: string) => {
    skipped++
    if (type) (types[type] as { skipped: number }).skipped++
    const found = { source, line, message }
    if (problems.length < MAX_KEPT_PROBLEMS) problems.push({ ...found, order: sourceOrder.get(source) ?? 0 })
    options.onProblem?.(found)
  }

  try {
    /**
     * One record, its text being `data[start, end)` (parsed here unless given); a promise to await before the
     * next when the writer is behind.
     */
    const take: Take = (source, line, data, start, end, given) => {
      records++
      let parsed = given
      if (parsed === undefined) {
        const record = parseJsonRecord(data, start, end)
        if ('problem' in record) {
          problem(source, line, record.problem)
          return undefined
        }
        parsed = record.value
      }
      const checked = check(layout, parsed)
      if (checked.kind === 'bad') {
        problem(source, line, checked.message)
        return undefined
      }
      if (checked.kind === 'ignored') {
        ignored[checked.type] = (ignored[checked.type] ?? 0) + 1
        return undefined
      }
      imported++
      ;(types[checked.type] as { imported: number }).imported++
      r4.check(checked.parsed, (fault) => typeFaults.add(fault, source, line))
      return build.add(
        checked.type,
        checked.id,
        checked.parsed,
        { source: sourceOrder.get(source) ?? 0, line },
        { data, start, end },
      )
    }

    const tooLarge = `larger than ${describeMb(limits.maxRecordBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one record`
    for (const source of sources) {
      const stream = await source.open(options.signal)
      const report = () => options.onProgress?.({ source: source.name, records, imported, skipped })
      let lastLine = 0
      try {
        if (source.format === 'json') {
          await readDocument(stream, source.name, limits, take, problem)
        } else {
          for await (const { first, data, bounds } of linesOf(stream, limits)) {
            for (let at = 0; at < bounds.length; at += 2) {
              lastLine = first + at / 2
              const start = bounds[at] as number
              const end = bounds[at + 1] as number
              if (start === OVERSIZED) {
                records++
                problem(source.name, lastLine, tooLarge)
                continue
              }
              if (isBlank(data, start, end)) continue
              const behind = take(source.name, lastLine, data, start, end)
              if (behind) await behind
              if (records % PROGRESS_EVERY === 0) report()
            }
            if (options.signal?.aborted) throw new ImportError(`${store} import interrupted`)
          }
        }
      } catch (error) {
        if (error instanceof UserError) throw error
        // A truncated or corrupt file, or a source that broke off: say where it stopped.
        throw new ImportError(
          `${source.name}: ${(error as Error).message}${source.format === 'ndjson' ? ` after line ${lastLine}, the last whole line read` : ''}; the previous ${store} is kept`,
        )
      } finally {
        stream.destroy()
      }
      report()
    }
    if (imported === 0) throw new ImportError(`The sources hold no ${store} resources; nothing changed`)
    await build.finish((duplicate) => {
      imported--
      ;(types[duplicate.type] as { imported: number }).imported--
      problem(
        (sources[duplicate.source] as ImportSource).name,
        duplicate.line,
        `duplicate ${duplicate.type}/${duplicate.id}: the release already holds it`,
        duplicate.type,
      )
    })

    problems.sort((a, b) => a.order - b.order || a.line - b.line)
    const summary: ImportSummary = {
      release,
      types,
      ignored,
      imported,
      skipped,
      problems: problems.map(({ order: _, ...found }) => found),
      typeFaults: typeFaults.lines(),
      durationMs: now() - started,
    }
    build.goLive({ types: summary.types, ignored: summary.ignored, skipped: summary.skipped }, now())
    return summary
  } catch (error) {
    await build.abort(now())
    if (error instanceof ImportError || error instanceof SourceError) throw error
    throw new ImportError(`Import failed, the previous ${store} is kept: ${(error as Error).message}`)
  }
}

type Take = (
  source: string,
  line: number,
  data: Buffer,
  start: number,
  end: number,
  parsed?: unknown,
) => Promise<void> | undefined

/** A whole JSON document: one resource, or a Bundle whose entries' resources are taken (numbered from 1). */
async function readDocument(
  stream: AsyncIterable<Buffer>,
  source: string,
  limits: IngestLimits,
  take: Take,
  problem: (source: string, line: number, message: string) => void,
): Promise<void> {
  const { bytes: whole, value: document } = await readJsonDocument(stream, source, limits.maxRecordBytes)
  const bundle = document as { resourceType?: unknown; entry?: unknown }
  if (bundle?.resourceType !== 'Bundle') return take(source, 1, whole, 0, whole.length, document)
  const entries = Array.isArray(bundle.entry) ? bundle.entry : []
  for (const [index, entry] of entries.entries()) {
    const resource = (entry as { resource?: unknown } | null)?.resource
    if (resource === undefined) {
      problem(source, index + 1, 'Bundle entry without a resource')
      continue
    }
    const json = Buffer.from(JSON.stringify(resource))
    await take(source, index + 1, json, 0, json.length, resource)
  }
}
