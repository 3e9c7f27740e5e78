import { describe, expect, it } from 'vitest'
import { orderByNextThenRank } from '../src/scheduling/search/listGroups.js'

/**
 * A list's groups are put in page order by their next start, then their key's rank
 * (src/scheduling/search/listGroups.ts): natively when the starts are whole seconds, by a comparator
 * otherwise. Both must give the order a plain sort gives, ties on the start included.
 */
function plainOrder(nexts: Float64Array, ranks: Int32Array): number[] {
  return Array.from(nexts, (_, at) => at).sort(
    (a, b) => (nexts[a] as number) - (nexts[b] as number) || (ranks[a] as number) - (ranks[b] as number),
  )
}

/** `count` groups with distinct ranks below `bound`, their starts drawn from `starts` (ties on purpose). */
function groups(count: number, bound: number, starts: (index: number) => number) {
  let seed = 7
  const next = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647
  const pool = Array.from({ length: bound }, (_, rank) => rank)
  for (let at = pool.length - 1; at > 0; at--) {
    const other = Math.floor(next() * (at + 1))
    ;[pool[at], pool[other]] = [pool[other] as number, pool[at] as number]
  }
  const ranks = Int32Array.from(pool.slice(0, count))
  const nexts = Float64Array.from({ length: count }, () => starts(Math.floor(next() * 40)))
  return { nexts, ranks }
}

const FROM = Date.parse('2027-01-04T08:00:00Z')

describe('the page order of a list of groups', () => {
  it('is by next start then rank for starts in whole seconds (sorted natively)', () => {
    const { nexts, ranks } = groups(3_000, 5_000, (slot) => FROM + slot * 900_000)
    expect(Array.from(orderByNextThenRank(nexts, ranks, 5_000))).toEqual(plainOrder(nexts, ranks))
  })

  it('is the same for starts with milliseconds and for a span too long to pack', () => {
    const withMs = groups(2_000, 2_500, (slot) => FROM + slot * 900_000 + (slot % 3))
    expect(Array.from(orderByNextThenRank(withMs.nexts, withMs.ranks, 2_500))).toEqual(
      plainOrder(withMs.nexts, withMs.ranks),
    )
    const farApart = groups(1_000, 1_000, (slot) => (slot % 2 === 0 ? -8.64e15 : 8.64e15) + slot * 1_000)
    expect(Array.from(orderByNextThenRank(farApart.nexts, farApart.ranks, 1_000))).toEqual(
      plainOrder(farApart.nexts, farApart.ranks),
    )
  })
})
