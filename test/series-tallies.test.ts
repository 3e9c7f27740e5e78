import { describe, expect, it } from 'vitest'
import { SeriesTallies } from '../src/scheduling/sync/seriesTallies.js'

/**
 * A sync's tallies against plain arrays built alongside, past the sizes their typed arrays start at (1,024
 * series, 65,536 slots) so that every growth is taken.
 */
describe('series tallies', () => {
  it('count, first start, every start sorted and booking methods per series and status, as plain arrays do', () => {
    const tallies = new SeriesTallies()
    const oracle = new Map<number, { starts: number[][]; online: boolean; phone: boolean }>()
    let seed = 7
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed
    }
    // Series ids as a sync assigns them (rising, from wherever the table is), taken in no order.
    const ids = Array.from({ length: 2_500 }, (_, index) => 90_000 + index)
    for (let slot = 0; slot < 150_000; slot++) {
      const id = ids[next() % ids.length] as number
      const status = next() % 4
      const start = Date.UTC(2026, 10, 1) + (next() % 100_000) * 60_000
      const online = next() % 50 === 0
      const phone = next() % 70 === 0
      tallies.add(id, status, start, online, phone)
      const plain = oracle.get(id) ?? { starts: [[], [], [], []], online: false, phone: false }
      plain.starts[status]?.push(start)
      plain.online ||= online
      plain.phone ||= phone
      oracle.set(id, plain)
    }
    expect(tallies.size).toBe(oracle.size)
    expect(tallies.range()).toEqual({
      lowest: Math.min(...oracle.keys()),
      highest: Math.max(...oracle.keys()),
    })
    const seen: number[] = []
    for (const figures of tallies.figures()) {
      const plain = oracle.get(figures.id)
      if (!plain) throw new Error(`series ${figures.id} was never added`)
      seen.push(figures.id)
      const sorted = plain.starts.map((starts) => [...starts].sort((a, b) => a - b))
      expect(figures.counts).toEqual(sorted.map((starts) => starts.length))
      expect(figures.firsts).toEqual(sorted.map((starts) => starts[0] ?? null))
      expect(figures.starts.map((starts) => [...starts])).toEqual(sorted)
      expect([figures.online, figures.phone]).toEqual([plain.online, plain.phone])
    }
    // In the order first taken, as the series rows are updated.
    expect(seen).toEqual([...oracle.keys()])
  })
})
