import { byKey } from './listGroups.js'
import { nthSmallest } from './startTimes.js'

/** An item on a page in the order of next start then key: its number among those ordered. */
export interface Ordered {
  nth: number
  next: number
  key: string
}

/**
 * The page (`limit` from the `offset`th) of `nexts.length` items in the order of next start, then key
 * (`keyOf(nth)`), without ordering them all: the page's first and last next starts are found by selection,
 * every item between them is on it, and only those tied at either (hundreds, when starts fall on a grid) are
 * ordered by key, as few as the page takes. Sorting the thousands before a deep page by key was most of its
 * search. `nexts` is reordered.
 */
export function pageInOrder(
  nexts: Float64Array,
  nextOf: (nth: number) => number,
  keyOf: (nth: number) => string,
  offset: number,
  limit: number,
): Ordered[] {
  const count = nexts.length
  if (offset >= count || limit <= 0) return []
  const last = Math.min(offset + limit, count) - 1
  const first = nthSmallest(nexts, offset)
  const latest = nthSmallest(nexts, last)
  let before = 0
  const atFirst: Ordered[] = []
  const between: Ordered[] = []
  const atLatest: Ordered[] = []
  for (let nth = 0; nth < count; nth++) {
    const next = nextOf(nth)
    if (next < first) before++
    else if (next === first) atFirst.push({ nth, next, key: keyOf(nth) })
    else if (next < latest) between.push({ nth, next, key: keyOf(nth) })
    else if (next === latest) atLatest.push({ nth, next, key: keyOf(nth) })
  }
  // Past the ones before the page: the first of those at its first next start that it reaches.
  const skipped = offset - before
  const ordered = firstByKey(atFirst, skipped + limit).slice(skipped)
  between.sort((a, b) => a.next - b.next || byKey(a.key, b.key))
  ordered.push(...between)
  ordered.push(...firstByKey(atLatest, limit - ordered.length))
  return ordered
}

/** The first `count` items by key, kept as they are met rather than sorted. */
function firstByKey<T extends { key: string }>(items: readonly T[], count: number): T[] {
  const kept: T[] = []
  if (count <= 0) return kept
  for (const item of items) {
    if (kept.length === count) {
      if (byKey(item.key, (kept[count - 1] as T).key) >= 0) continue
      kept.pop()
    }
    let at = kept.length
    while (at > 0 && byKey(item.key, (kept[at - 1] as T).key) < 0) at--
    kept.splice(at, 0, item)
  }
  return kept
}
