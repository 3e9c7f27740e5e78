import { byKey, keyLead } from './listGroups.js'
import { nthSmallest } from './startTimes.js'

/** An item on a page in the order of next start then key: its number among those ordered. */
export interface Ordered {
  nth: number
  next: number
  key: string
  /** `keyLead(key)`: compared first. */
  lead: number
}

function orderedItem(nth: number, next: number, key: string): Ordered {
  return { nth, next, key, lead: keyLead(key) }
}

function inKeyOrder(a: Ordered, b: Ordered): number {
  return a.lead - b.lead || byKey(a.key, b.key)
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
    else if (next === first) atFirst.push(orderedItem(nth, next, keyOf(nth)))
    else if (next < latest) between.push(orderedItem(nth, next, keyOf(nth)))
    else if (next === latest) atLatest.push(orderedItem(nth, next, keyOf(nth)))
  }
  // Past the ones before the page: the first of those at its first next start that it reaches.
  const skipped = offset - before
  const ordered = firstByKey(atFirst, skipped + limit).slice(skipped)
  between.sort((a, b) => a.next - b.next || inKeyOrder(a, b))
  ordered.push(...between)
  ordered.push(...firstByKey(atLatest, limit - ordered.length))
  return ordered
}

/** Items over this many times the number asked for are kept as met, not sorted. */
const KEPT_SHARE = 8

/**
 * The first `count` items by key: kept as they are met when they are a few of many (a page's worth of a
 * start shared by thousands), else sorted (kept so, the hundreds tied at a deep page's first start cost a
 * compare per pair).
 */
function firstByKey(items: readonly Ordered[], count: number): Ordered[] {
  const kept: Ordered[] = []
  if (count <= 0) return kept
  if (count * KEPT_SHARE >= items.length) return [...items].sort(inKeyOrder).slice(0, count)
  for (const item of items) {
    if (kept.length === count) {
      if (inKeyOrder(item, kept[count - 1] as Ordered) >= 0) continue
      kept.pop()
    }
    let at = kept.length
    while (at > 0 && inKeyOrder(item, kept[at - 1] as Ordered) < 0) at--
    kept.splice(at, 0, item)
  }
  return kept
}
