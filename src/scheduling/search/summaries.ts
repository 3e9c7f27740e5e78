import type { Coding } from '../model.js'

/** Texts of moments kept at most; slots start and end on a few thousand quarter hours a month. */
const KEPT_MOMENTS = 50_000
const momentTexts = new Map<number, string>()

/** A moment as ISO 8601 text; kept, as a page of slots formats 100 (half a microsecond each, anew). */
export function iso(ms: number): string {
  let text = momentTexts.get(ms)
  if (text === undefined) {
    if (momentTexts.size >= KEPT_MOMENTS) momentTexts.clear()
    text = new Date(ms).toISOString()
    momentTexts.set(ms, text)
  }
  return text
}

/** Distinct coding lists kept parsed at most: a few MB. */
const KEPT_SUMMARIES = 20_000

/**
 * The stored JSON coding lists of series (service types, specialties), each parsed once and shared by every
 * answer that shows it, read-only: a page of slots spread over many series parsed each of theirs anew. Keyed
 * by the text itself, so a changed list is another entry; past KEPT_SUMMARIES all are dropped and parsed
 * again as asked. (Location and provider summaries, answered as they are, are spliced in unparsed: RawJson.)
 */
class ParsedSummaries {
  readonly #parsed = new Map<string, unknown>()
  get<T>(json: string): T {
    let value = this.#parsed.get(json)
    if (value === undefined) {
      if (this.#parsed.size >= KEPT_SUMMARIES) this.#parsed.clear()
      value = JSON.parse(json)
      this.#parsed.set(json, value)
    }
    return value as T
  }
}

export const summaries = new ParsedSummaries()

/** Each parsed list's codings once each, kept with the list: most groups on a page have a single series. */
const distinct = new WeakMap<Coding[], Coding[]>()

/** The codings of the lists once each (by system and code), in the order first met. Read-only: may be kept. */
export function union(lists: Coding[][]): Coding[] {
  const [only] = lists
  if (lists.length !== 1 || !only) return distinctOf(lists.flat())
  let kept = distinct.get(only)
  if (!kept) {
    kept = distinctOf(only)
    distinct.set(only, kept)
  }
  return kept
}

function distinctOf(codings: Coding[]): Coding[] {
  const seen = new Map<string, Coding>()
  for (const coding of codings) seen.set(`${coding.system ?? ''}|${coding.code}`, coding)
  return [...seen.values()]
}
