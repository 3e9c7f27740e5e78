import type Database from 'better-sqlite3'
import { parseJsonRecord, readBounded } from '../ingest/json.js'
import { DEFAULT_INGEST_LIMITS, type IngestLimits } from '../ingest/limits.js'
import { resolveSources, SourceError } from '../ingest/sources.js'
import { questionnaireFault } from './check.js'
import { type HeldQuestionnaire, HeldQuestionnaires } from './held.js'

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

const isObject = (value: unknown): value is Resource =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The line each element of the root object's `entry` array starts on, in order: a Bundle's records are
 * reported by the line their entry opens on. A scan of the text, strings and escapes skipped.
 */
export function entryLines(text: string): number[] {
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

/**
 * A source's records: one JSON document (a resource, or a Bundle of them) when the whole source parses as
 * one, else NDJSON lines. A `.json` source that is not one JSON document cannot be read.
 */
function recordsOf(name: string, format: 'json' | 'ndjson', bytes: Buffer): SourceRecord[] {
  const whole = parseJsonRecord(withoutBom(bytes))
  if ('problem' in whole && format === 'json') throw new SourceError(`${name}: ${whole.problem}`)
  if (!('problem' in whole)) {
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
  const records: SourceRecord[] = []
  let line = 1
  for (let start = 0; start <= bytes.length; line++) {
    const found = bytes.indexOf(10, start)
    const end = found === -1 ? bytes.length : found
    const stop = end > start && bytes[end - 1] === 13 ? end - 1 : end
    const slice = withoutBom(bytes.subarray(start, stop))
    if (slice.toString('utf8').trim() !== '') {
      const record = parseJsonRecord(slice)
      records.push(
        'problem' in record
          ? { line, bytes: slice, value: undefined, fault: `not R4 JSON: ${record.problem}` }
          : { line, bytes: Buffer.from(slice), value: record.value },
      )
    }
    start = end + 1
  }
  return records
}

const withoutBom = (bytes: Buffer) =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes

/**
 * `svc import questionnaires`: every source is read whole first (a source that cannot be read, or a JSON
 * file that is not JSON, fails the import and nothing is written); then every record that is a
 * Questionnaire is held in one transaction, replacing what had its `url|version`, and each other record is
 * reported with its source and line.
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
  const read: { name: string; origin: 'file' | 'address'; records: SourceRecord[] }[] = []
  for (const source of sources) {
    const bytes = await readBounded(await source.open(), source.name, limits.maxSourceBytes)
    read.push({
      name: source.name,
      origin: /^https?:\/\//i.test(source.name) ? 'address' : 'file',
      records: recordsOf(source.name, source.format, bytes),
    })
  }
  const problems: QuestionnaireProblem[] = []
  const now = new Date((options.now ?? Date.now)()).toISOString()
  const held = new HeldQuestionnaires(db)
  const summaries = db.transaction(() =>
    read.map(({ name, origin, records }) => {
      const summary: QuestionnaireSourceSummary = {
        source: name,
        read: records.length,
        written: 0,
        replaced: 0,
        refused: 0,
      }
      for (const record of records) {
        const problem = record.fault ?? questionnaireFault(record.value)
        if (problem) {
          summary.refused++
          const reported = { source: name, line: record.line, message: problem }
          problems.push(reported)
          options.onProblem?.(reported)
          continue
        }
        const put: HeldQuestionnaire = {
          bytes: record.bytes,
          resource: record.value as Resource,
          origin,
          source: name,
        }
        const result = held.put(put, now)
        summary.written++
        if (result.replaced) summary.replaced++
      }
      return summary
    }),
  )()
  return { sources: summaries, problems, refused: problems.length }
}
