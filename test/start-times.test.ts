import { describe, expect, it } from 'vitest'
import {
  countBefore,
  firstMatches,
  HOUR_MS,
  skipAhead,
  nthStart,
  type StartLists,
  startsTogether,
  startsTogetherSteps,
  type SyncStarts,
} from '../src/scheduling/search/startTimes.js'
import { runInSlices } from '../src/workInSlices.js'

/** Lists given whole, as the ranges skipAhead reads. */
const wholeLists =
  (lists: readonly Float64Array[]): StartLists =>
  (visit) => {
    for (const list of lists) visit(list, 0, list.length)
  }

/** A series' slot starts as search keeps them (src/scheduling/search/startTimes.ts), ascending. */
const starts = (...list: number[]) => Float64Array.from(list)
const at = (hour: number, minutes = 0) => hour * HOUR_MS + minutes * 60_000

describe('counting a series from its starts', () => {
  it('counts the starts before a moment, a start at the moment not among them', () => {
    const list = starts(at(1), at(2), at(2), at(3, 30))
    expect(countBefore(list, at(0))).toBe(0)
    expect(countBefore(list, at(2))).toBe(1)
    expect(countBefore(list, at(2) + 1)).toBe(3)
    expect(countBefore(list, at(9))).toBe(4)
  })

  it('counts within a range of the array alone', () => {
    // Two series end to end: the second's starts are list[3] to list[5].
    const list = starts(at(1), at(2), at(2), at(1), at(3, 30), at(5))
    expect(countBefore(list, at(2), 3, 6)).toBe(4)
    expect(countBefore(list, at(0), 3, 6)).toBe(3)
    expect(countBefore(list, at(9), 3, 6)).toBe(6)
  })
})

describe("first matches from each series' next match", () => {
  const nexts = (...list: number[]) => list
  const none = Number.POSITIVE_INFINITY

  it('keeps the series whose next match is at or before the count-th soonest, ties included', () => {
    const list = nexts(at(50), at(15), at(20), at(15))
    expect(firstMatches(list, 1)).toEqual({ indexes: [1, 3], before: at(15) + 1 })
    expect(firstMatches(list, 3)).toEqual({ indexes: [1, 2, 3], before: at(20) + 1 })
    expect(firstMatches(list, 4)).toEqual({ indexes: [0, 1, 2, 3], before: at(50) + 1 })
  })

  it('finds nothing to narrow when fewer series than matches asked for have one', () => {
    expect(firstMatches(nexts(at(3), at(4)), 3)).toBeUndefined()
    expect(firstMatches(nexts(none, at(3), none), 2)).toBeUndefined()
  })
})

describe('skipping whole hours of a deep page', () => {
  it('skips the hours before the offset, counting the matches before the first whole hour by subtraction', () => {
    // From 10:30: 2 matches in the rest of hour 10 (of 3 stored), then 4, 4 and 2 in hours 11 to 13.
    const lists = [
      starts(at(10, 10), at(10, 40), at(11), at(11, 20), at(12), at(12, 5), at(13)),
      starts(at(10, 45), at(11, 1), at(11, 59), at(12), at(12, 30), at(13, 10)),
    ]
    const total = 2 + 4 + 4 + 2
    expect(skipAhead(wholeLists(lists), total, at(10, 30), 5)).toEqual({ from: at(11), skipped: 2 })
    expect(skipAhead(wholeLists(lists), total, at(10, 30), 6)).toEqual({ from: at(12), skipped: 6 })
    expect(skipAhead(wholeLists(lists), total, at(10, 30), 11)).toEqual({ from: at(13), skipped: 10 })
    // Nothing to skip: the offset lies within the matches before the first whole hour.
    expect(skipAhead(wholeLists(lists), total, at(10, 30), 1)).toBeUndefined()
  })

  it('reads each list as its range of a shared array', () => {
    const lists = [starts(at(4), at(5), at(5, 30), at(6)), starts(at(5, 59), at(6, 1))]
    // As a part keeps them: every series' starts end to end, with starts of others on either side.
    const shared = starts(at(1), ...(lists[0] as Float64Array), ...(lists[1] as Float64Array), at(9))
    const ranges: StartLists = (visit) => {
      visit(shared, 1, 5)
      visit(shared, 5, 7)
    }
    for (const offset of [1, 2, 3, 4, 5])
      expect(skipAhead(ranges, 6, undefined, offset)).toEqual(
        skipAhead(wholeLists(lists), 6, undefined, offset),
      )
    expect(skipAhead(ranges, 6, undefined, 4)).toEqual({ from: at(6), skipped: 4 })
  })
})

describe('the match at an offset over every series', () => {
  it('starts where a sort of every start from the moment puts it, and skips the matches before that start', () => {
    let seed = 11
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    for (let round = 0; round < 200; round++) {
      // Quarter hours, so that starts repeat within a list and across lists as they do in feeds; or any
      // millisecond, so that the search's guesses fall between starts.
      const start = () =>
        round % 2 === 0 ? at(Math.floor(random() * 48) / 4) : Math.floor(random() * at(12))
      const lists = Array.from({ length: 1 + Math.floor(random() * 5) }, () =>
        starts(...Array.from({ length: Math.floor(random() * 30) }, start).sort((a, b) => a - b)),
      )
      const startAfter = random() < 0.3 ? undefined : at(Math.floor(random() * 48) / 4)
      const all = lists
        .flatMap((list) => [...list])
        .filter((start) => startAfter === undefined || start >= startAfter)
      all.sort((a, b) => a - b)
      const offset = Math.floor(random() * (all.length + 2))
      const from = all[offset]
      const skipped = from === undefined ? 0 : all.filter((start) => start < from).length
      const expected = from === undefined || skipped === 0 ? undefined : { from, skipped }
      expect({ round, found: nthStart(lists, startAfter, offset) }).toEqual({ round, found: expected })
    }
  })
})

describe('the count-th soonest next match', () => {
  it('is the one a sort would put there, whatever the order and repeats', () => {
    let seed = 7
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    for (let round = 0; round < 200; round++) {
      const length = 1 + Math.floor(random() * 60)
      const values = Array.from({ length }, () =>
        random() < 0.1 ? Number.POSITIVE_INFINITY : Math.floor(random() * 12) * HOUR_MS,
      )
      const count = 1 + Math.floor(random() * length)
      const sorted = values.slice().sort((a, b) => a - b)
      const latest = sorted[count - 1] as number
      const expected =
        latest === Number.POSITIVE_INFINITY
          ? undefined
          : {
              indexes: [...values.keys()].filter((index) => (values[index] as number) <= latest),
              before: latest + 1,
            }
      expect(firstMatches(values, count)).toEqual(expected)
    }
  })
})

describe("a part's starts together", () => {
  it("are every chosen series' starts in ascending order, at once and in slices, past the blocks sorted at once", async () => {
    let seed = 5
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    // Ids 10 to 5,009, each series' starts ascending: about 250,000 starts.
    const lists = Array.from({ length: 5_000 }, () =>
      Array.from({ length: Math.floor(random() * 100) }, () => at(Math.floor(random() * 2_880) / 4)).sort(
        (a, b) => a - b,
      ),
    )
    const offsets = new Int32Array(lists.length + 1)
    lists.forEach((list, index) => {
      offsets[index + 1] = (offsets[index] as number) + list.length
    })
    const sync: SyncStarts = { lo: 10, at: offsets, starts: Float64Array.from(lists.flat()) }
    // Every third series, and one outside the part (no starts).
    const ids = [...lists.keys()].filter((index) => index % 3 !== 1).map((index) => index + 10)
    ids.push(5)
    const expected = ids.flatMap((id) => lists[id - 10] ?? []).sort((a, b) => a - b)
    // Four blocks of 32,768 (SORT_BLOCK) and part of a fifth: three rounds of merging.
    expect(expected.length).toBeGreaterThan(4 * 32_768)
    expect([...startsTogether(sync, ids)]).toEqual(expected)
    expect([...(await runInSlices(startsTogetherSteps(sync, ids)))]).toEqual(expected)
  })
})
