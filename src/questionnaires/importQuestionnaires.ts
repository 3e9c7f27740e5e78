import type Database from 'better-sqlite3'
import type { Readable } from 'node:stream'
import { parseJsonRecord, readBounded } from '../ingest/json.js'
import { isBlank, linesOf, OVERSIZED } from '../ingest/lines.js'
import { DEFAULT_INGEST_LIMITS, describeMb, type IngestLimits } from '../ingest/limits.js'
import { resolveSources, SourceError } from '../ingest/sources.js'
import { questionnaireFault } from './check.js'
import { HeldQuestionnaires } from './held.js'
import { isJsonObject as isObject } from '../jsonObject.js'
import { inTransaction } from '../db/sqlite.js'

type Resource = Record<string, unknown>

export interface QuestionnaireProblem {
  source: string
  line: number
  message: string
}

export interface QuestionnaireSourceSummary {
  source: string
  read: number
  written: number
  replaced: number
  refused: number
}

export interface QuestionnairesImportSummary {
  sources: QuestionnaireSourceSummary[]
  problems: QuestionnaireProblem[]
  refused: number
}

/** One record of a source, with the line it starts on; `fault` when its line is not JSON at all. */
interface SourceRecord {
  line: number
  bytes: Buffer
  value: unknown
  fault?: string
}

/**
 * The line each element of the root object's `entry` array starts on, in order: a Bundle's records are
 * reported by the line their entry opens on. A scan of the text, strings and escapes skipped.
 */
function entryLines(text: string): number[] {
  const lines: number[] = []
  let line = 1
  let depth = 0
  let inString = false
  let stringStart = 0
  let lastKey = ''
  let inEntries = false
  for (let at = 0; at < text.length; at++) {
    const char = text[at]
    if (char === '\n') line++
    if (inString) {
      if (char === '\\') at++
      else if (char === '"') {
        inString = false
        if (depth === 1) lastKey = text.slice(stringStart, at)
      }
      continue
    }
    if (char === '"') {
      inString = true
      stringStart = at + 1
    } else if (char === '{' || char === '[') {
      if (depth === 1 && char === '[' && lastKey === 'entry') inEntries = true
      else if (depth === 2 && inEntries && char === '{') lines.push(line)
      depth++
    } else if (char === '}' || char === ']') {
      depth--
      if (depth === 1) inEntries = false
    }
  }
  return lines
}

/** A JSON document's records: the resource, or each entry of a Bundle with the line it opens on. */
function documentRecords(name: string, bytes: Buffer): SourceRecord[] {
  const whole = parseJsonRecord(withoutBom(bytes))
  if ('problem' in whole) throw new SourceError(`${name}: ${whole.problem}`)
  const value = whole.value
  if (!isObject(value) || value.resourceType !== 'Bundle')
    return [{ line: 1, bytes: withoutBom(bytes), value }]
  const lines = entryLines(bytes.toString('utf8'))
  const entries: unknown[] = Array.isArray(value.entry) ? value.entry : []
  return entries.map((entry, position) => {
    const resource = isObject(entry) ? entry.resource : undefined
    // An entry's bytes cannot be cut out of the Bundle: its members are kept as published, in order.
    return {
      line: lines[position] ?? 1,
      bytes: Buffer.from(JSON.stringify(resource ?? null)),
      value: resource,
    }
  })
}

/** NDJSON records as they stream in, in constant memory: a line that is not JSON is a refused record. */
async function* lineRecords(stream: Readable, maxRecordBytes: number): AsyncGenerator<SourceRecord> {
  for await (const { first, data, bounds } of linesOf(stream, { maxRecordBytes })) {
    for (let index = 0; index < bounds.length; index += 2) {
      const start = bounds[index] as number
      const end = bounds[index + 1] as number
      const line = first + index / 2
      if (start === OVERSIZED) {
        yield {
          line,
          bytes: Buffer.alloc(0),
          value: undefined,
          fault: `larger than ${describeMb(maxRecordBytes, 'SVC_IMPORT_MAX_RECORD_MB')}, the limit of one record`,
        }
        continue
      }
      if (isBlank(data, start, end)) continue
      const record = parseJsonRecord(data, start, end)
      yield 'problem' in record
        ? { line, bytes: Buffer.alloc(0), value: undefined, fault: `not R4 JSON: ${record.problem}` }
        : { line, bytes: Buffer.from(data.subarray(start, end)), value: record.value }
    }
  }
}

const withoutBom = (bytes: Buffer) =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes

/**
 * `svc import questionnaires`: `.json` sources are one document (a Questionnaire or a Bundle of them),
 * others NDJSON read line by line. Every record that is a Questionnaire is held, replacing what had its
 * `url|version`, and each other record is reported with its source and line; all in one transaction, so a
 * source that cannot be read (missing, a failed download, a `.json` file that is not JSON) leaves the
 * store as it was.
 */
export async function importQuestionnaires(
  db: Database.Database,
  inputs: string[],
  options: {
    limits?: IngestLimits
    now?: () => number
    onProblem?: (problem: QuestionnaireProblem) => void
  } = {},
): Promise<QuestionnairesImportSummary> {
  const limits = options.limits ?? DEFAULT_INGEST_LIMITS
  const sources = await resolveSources(inputs, { userAgent: 'svc-import-questionnaires', limits })
  const problems: QuestionnaireProblem[] = []
  const now = new Date((options.now ?? Date.now)()).toISOString()
  const held = new HeldQuestionnaires(db)
  const summaries: QuestionnaireSourceSummary[] = []
  // One transaction over every source, read as it streams: a source that breaks off rolls it all back.
  await inTransaction(db, async () => {
    for (const source of sources) {
      const summary = { source: source.name, read: 0, written: 0, replaced: 0, refused: 0 }
      summaries.push(summary)
      const origin = /^https?:\/\//i.test(source.name) ? 'address' : 'file'
      const stream = await source.open()
      const records =
        source.format === 'json'
          ? documentRecords(source.name, await readBounded(stream, source.name, limits.maxRecordBytes))
          : lineRecords(stream, limits.maxRecordBytes)
      for await (const record of records) {
        summary.read++
        const problem = record.fault ?? questionnaireFault(record.value)
        if (problem) {
          summary.refused++
          const reported = { source: source.name, line: record.line, message: problem }
          problems.push(reported)
          options.onProblem?.(reported)
          continue
        }
        const result = held.put(
          { bytes: record.bytes, resource: record.value as Resource, origin, source: source.name },
          now,
        )
        summary.written++
        if (result.replaced) summary.replaced++
      }
    }
  })
  return { sources: summaries, problems, refused: problems.length }
}
