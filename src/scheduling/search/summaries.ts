import type { Coding } from '../model.js'

export const iso = (ms: number) => new Date(ms).toISOString()

/** Parses each group's summaries once per response, however many of its slots the page holds. */
export class SummaryCache {
  readonly #cache = new Map<string, unknown>()
  get<T>(json: string): T {
    let value = this.#cache.get(json)
    if (value === undefined) {
      value = JSON.parse(json)
      this.#cache.set(json, value)
    }
    return value as T
  }
}

export function union(lists: Coding[][]): Coding[] {
  const seen = new Map<string, Coding>()
  for (const coding of lists.flat()) seen.set(`${coding.system ?? ''}|${coding.code}`, coding)
  return [...seen.values()]
}
