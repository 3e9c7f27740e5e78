/** Slot statuses a series counts apart: free, busy, busy-unavailable, busy-tentative. */
const STATUSES = 4
const ONLINE = 1
const PHONE = 2

/** One series' figures once a sync's slots are all in. */
export interface SeriesFigures {
  id: number
  /** Per status: slots, and the first start (null without any). */
  counts: number[]
  firsts: (number | null)[]
  /** Per status: every slot's start, ascending. */
  starts: Float64Array[]
  online: boolean
  phone: boolean
}

/**
 * What one sync's slots tell of each series: per status the slots, the first start and every start, and
 * whether any carries a booking link or phone. Kept in typed arrays by series and by slot: as objects and
 * arrays of each series' own, a national chain's 80,000 series and 2,000,000 slots took some 100 MB of the
 * sync's heap.
 */
export class SeriesTallies {
  readonly #ids: number[] = []
  readonly #indexOf = new Map<number, number>()
  /** By series index × STATUSES + status. */
  #counts = new Int32Array(STATUSES * 1024)
  #flags = new Uint8Array(1024)
  /** By slot, in the order taken: its start, and its series index × STATUSES + status. */
  #starts = new Float64Array(1 << 16)
  #keys = new Int32Array(1 << 16)
  #slots = 0

  get size(): number {
    return this.#ids.length
  }

  add(seriesId: number, status: number, startMs: number, online: boolean, phone: boolean): void {
    let index = this.#indexOf.get(seriesId)
    if (index === undefined) {
      index = this.#ids.push(seriesId) - 1
      this.#indexOf.set(seriesId, index)
      if (index === this.#flags.length) this.#growSeries()
    }
    const key = index * STATUSES + status
    ;(this.#counts[key] as number)++
    if (online) (this.#flags[index] as number) |= ONLINE
    if (phone) (this.#flags[index] as number) |= PHONE
    if (this.#slots === this.#starts.length) this.#growSlots()
    this.#starts[this.#slots] = startMs
    this.#keys[this.#slots++] = key
  }

  /** The lowest and highest series id taken. */
  range(): { lowest: number; highest: number } {
    let lowest = Number.POSITIVE_INFINITY
    let highest = Number.NEGATIVE_INFINITY
    for (const id of this.#ids) {
      lowest = Math.min(lowest, id)
      highest = Math.max(highest, id)
    }
    return { lowest, highest }
  }

  /** Every series in the order first taken; the slots' starts are let go as they are sorted by series. */
  *figures(): Generator<SeriesFigures> {
    const keys = this.#ids.length * STATUSES
    // Where each series' starts of a status begin among all starts ordered by series and status.
    const begins = new Int32Array(keys + 1)
    for (let key = 0; key < keys; key++)
      begins[key + 1] = (begins[key] as number) + (this.#counts[key] as number)
    const sorted = new Float64Array(this.#slots)
    const next = begins.slice(0, keys)
    for (let slot = 0; slot < this.#slots; slot++)
      sorted[(next[this.#keys[slot] as number] as number)++] = this.#starts[slot] as number
    this.#starts = new Float64Array(0)
    this.#keys = new Int32Array(0)
    this.#slots = 0
    for (const [index, id] of this.#ids.entries()) {
      const at = index * STATUSES
      const statuses = Array.from({ length: STATUSES }, (_, status) => at + status)
      const starts = statuses.map((key) => sorted.subarray(begins[key], begins[key + 1]).sort())
      yield {
        id,
        counts: statuses.map((key) => this.#counts[key] as number),
        firsts: starts.map((ofStatus) => ofStatus[0] ?? null),
        starts,
        online: ((this.#flags[index] as number) & ONLINE) !== 0,
        phone: ((this.#flags[index] as number) & PHONE) !== 0,
      }
    }
  }

  #growSeries(): void {
    const series = this.#flags.length * 2
    this.#counts = grown(this.#counts, new Int32Array(series * STATUSES))
    this.#flags = grown(this.#flags, new Uint8Array(series))
  }

  #growSlots(): void {
    const slots = this.#starts.length * 2
    this.#starts = grown(this.#starts, new Float64Array(slots))
    this.#keys = grown(this.#keys, new Int32Array(slots))
  }
}

/** `larger` with `array` copied to its start. */
function grown<T extends Int32Array | Float64Array | Uint8Array>(array: T, larger: T): T {
  larger.set(array as never)
  return larger
}
