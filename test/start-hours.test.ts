import { describe, expect, it } from 'vitest'
import { firstMatches, HOUR_MS, skipAhead } from '../src/scheduling/search/startHours.js'

/** Start hours as search keeps them per series (src/scheduling/startHours.ts), from hour numbers. */
const hours = (...list: number[]) => Int32Array.from(list)
const at = (hour: number, minutes = 0) => hour * HOUR_MS + minutes * 60_000

describe('first matches from start hours', () => {
  it('counts a series in the hour of startAfter as promising a match only from a later hour', () => {
    // Series 0's slot in hour 10 may lie before 10:30; its next sure match is in hour 50.
    const lists = [hours(10, 50), hours(15), hours(20)]
    const first = firstMatches(lists, at(10, 30), 1)
    expect(first).toEqual({ indexes: [0, 1], before: at(16) })
    // Two matches: the second promise ends with hour 20, and series 2 may hold one too.
    expect(firstMatches(lists, at(10, 30), 2)).toEqual({ indexes: [0, 1, 2], before: at(21) })
  })

  it('leaves out series whose next slot starts at or after the moment found, and those with none left', () => {
    const lists = [hours(3, 4), hours(5), hours(9), hours(1)]
    expect(firstMatches(lists, at(2), 2)).toEqual({ indexes: [0, 1], before: at(6) })
    // Every match when no startAfter: series 3's hour-1 slot counts.
    expect(firstMatches(lists, undefined, 1)).toEqual({ indexes: [3], before: at(2) })
  })

  it('finds nothing to narrow when fewer series than matches asked for promise one', () => {
    expect(firstMatches([hours(3), hours(4)], at(0), 3)).toBeUndefined()
    expect(firstMatches([hours(3), hours(3)], at(3, 10), 1)).toBeUndefined()
  })
})

describe('skipping whole hours of a deep page', () => {
  it('skips the hours before the offset, counting the matches before the first whole hour by subtraction', () => {
    // From 10:30: 2 matches in the rest of hour 10 (of 3 stored), then 4, 4 and 2 in hours 11 to 13.
    const lists = [hours(10, 10, 11, 11, 12, 12, 13), hours(10, 11, 11, 12, 12, 13)]
    const total = 2 + 4 + 4 + 2
    expect(skipAhead(lists, [], total, at(10, 30), 5)).toEqual({ from: at(11), skipped: 2 })
    expect(skipAhead(lists, [], total, at(10, 30), 6)).toEqual({ from: at(12), skipped: 6 })
    expect(skipAhead(lists, [], total, at(10, 30), 11)).toEqual({ from: at(13), skipped: 10 })
    // Nothing to skip: the offset lies within the matches before the first whole hour.
    expect(skipAhead(lists, [], total, at(10, 30), 1)).toBeUndefined()
  })

  it('sums whole sets of series from their histograms as it does single series', () => {
    const lists = [hours(4, 5, 5, 6), hours(5, 6)]
    const histogram = { first: 4, counts: Int32Array.from([1, 3, 2]) }
    expect(skipAhead([], [histogram], 6, undefined, 4)).toEqual(skipAhead(lists, [], 6, undefined, 4))
    expect(skipAhead([], [histogram], 6, undefined, 4)).toEqual({ from: at(6), skipped: 4 })
  })
})
