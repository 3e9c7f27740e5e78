import { LatencyHistogram } from './histogram.js'

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx'] as const
export type StatusClass = (typeof STATUS_CLASSES)[number]

/** A status's index in STATUS_CLASSES. */
export const statusClassIndex = (status: number): number =>
  status === 429 ? 3 : status >= 500 ? 4 : status >= 400 ? 2 : status >= 300 ? 1 : 0

/** What a request was for: `GET /v1/scheduling/slots`, or the method and `(unmatched)`. */
export interface Endpoint {
  method: string
  route: string
  group: string
}

/** The window's running totals for one organization's requests to one endpoint. */
export interface Cell {
  readonly orgId: number | null
  readonly endpoint: Endpoint
  /** Requests by status class, indexed as STATUS_CLASSES. */
  readonly byClass: number[]
  /** Requests in the recent part of the window (the last `recentMs`). */
  recent: number
  /** Latencies of every request of the cell in the window; its count is the cell's requests. */
  readonly histogram: LatencyHistogram
}

const SECOND_MS = 1000

/**
 * The requests logged in one second, kept as small numbers (offset in the second, cell, latency bin, status
 * class) only so that the one second the window's edge falls in can be taken out to the millisecond.
 */
class Second {
  length = 0
  offsets = new Uint16Array(16)
  cells = new Uint32Array(16)
  bins = new Uint16Array(16)
  classes = new Uint8Array(16)

  push(offset: number, cell: number, bin: number, statusClass: number): void {
    if (this.length === this.offsets.length) this.#grow()
    const index = this.length++
    this.offsets[index] = offset
    this.cells[index] = cell
    this.bins[index] = bin
    this.classes[index] = statusClass
  }

  #grow(): void {
    const size = this.offsets.length * 2
    const grow = <T extends Uint8Array | Uint16Array | Uint32Array>(from: T, to: T) => (to.set(from), to)
    this.offsets = grow(this.offsets, new Uint16Array(size))
    this.cells = grow(this.cells, new Uint32Array(size))
    this.bins = grow(this.bins, new Uint16Array(size))
    this.classes = grow(this.classes, new Uint8Array(size))
  }
}

/**
 * Requests of a sliding window (`at` > now − windowMs) and of its recent part (`at` > now − recentMs),
 * summed as they come in per organization and endpoint (a cell): count by status class, requests in the
 * recent part and a latency histogram. Figures over the window then cost a pass over the cells, whatever
 * the traffic. Moving the window takes out what left it: whole seconds at once, and in the second its edge
 * falls in only the requests at or before the edge, so every figure is exact to the millisecond.
 */
export class SlidingTotals {
  readonly #seconds = new Map<number, Second>()
  readonly #cells: (Cell | undefined)[] = []
  readonly #freeIds: number[] = []
  readonly #ids = new Map<Endpoint, Map<number | null, number>>()
  /** Requests at or before these instants are out of the window, or of its recent part. */
  #edge = Number.NEGATIVE_INFINITY
  #recentEdge = Number.NEGATIVE_INFINITY

  constructor(
    private readonly windowMs: number,
    private readonly recentMs: number,
  ) {}

  /** Moves the window to end at `now` (never back): takes out what has left the window and its recent part. */
  advance(now: number): void {
    const edge = Math.max(this.#edge, now - this.windowMs)
    const recentEdge = Math.max(this.#recentEdge, now - this.recentMs)
    for (const [second, rows] of this.#seconds) {
      const start = second * SECOND_MS
      const last = start + SECOND_MS - 1
      // Each request goes out once: those past the last edge and at or before the new one.
      const leavesRecent = start <= recentEdge && last > this.#recentEdge
      const leavesWindow = start <= edge && last > this.#edge
      if (!leavesRecent && !leavesWindow) continue
      for (let index = 0; index < rows.length; index++) {
        const at = start + (rows.offsets[index] as number)
        const cell = this.#cells[rows.cells[index] as number] as Cell
        if (at > this.#recentEdge && at <= recentEdge) cell.recent--
        if (at > this.#edge && at <= edge) this.#takeOut(cell, rows, index)
      }
      if (last <= edge) this.#seconds.delete(second)
    }
    this.#edge = edge
    this.#recentEdge = recentEdge
  }

  /** Counts one request, unless it is already out of the window. */
  add(loggedAt: number, orgId: number | null, endpoint: Endpoint, bin: number, statusClass: number): void {
    // Instants are whole milliseconds (as the server logs them): it is as such that a request is kept, and
    // so compared again when it leaves.
    const at = Math.floor(loggedAt)
    if (at <= this.#edge) return
    const second = Math.floor(at / SECOND_MS)
    let rows = this.#seconds.get(second)
    if (!rows) this.#seconds.set(second, (rows = new Second()))
    const id = this.#cellId(orgId, endpoint)
    rows.push(at - second * SECOND_MS, id, bin, statusClass)
    const cell = this.#cells[id] as Cell
    cell.histogram.add(bin)
    cell.byClass[statusClass] = (cell.byClass[statusClass] as number) + 1
    if (at > this.#recentEdge) cell.recent++
  }

  /** Every cell with requests in the window. */
  *cells(): Generator<Cell> {
    for (const cell of this.#cells) if (cell) yield cell
  }

  #takeOut(cell: Cell, rows: Second, index: number): void {
    const statusClass = rows.classes[index] as number
    cell.byClass[statusClass] = (cell.byClass[statusClass] as number) - 1
    cell.histogram.remove(rows.bins[index] as number)
    if (cell.histogram.count > 0) return
    // Empty: its id goes back for reuse. Requests still held with this id are all at or before the edge,
    // so they are never read again.
    const id = this.#ids.get(cell.endpoint)?.get(cell.orgId) as number
    this.#ids.get(cell.endpoint)?.delete(cell.orgId)
    this.#cells[id] = undefined
    this.#freeIds.push(id)
  }

  #cellId(orgId: number | null, endpoint: Endpoint): number {
    let byOrg = this.#ids.get(endpoint)
    if (!byOrg) this.#ids.set(endpoint, (byOrg = new Map()))
    let id = byOrg.get(orgId)
    if (id === undefined) {
      id = this.#freeIds.pop() ?? this.#cells.length
      this.#cells[id] = {
        orgId,
        endpoint,
        byClass: STATUS_CLASSES.map(() => 0),
        recent: 0,
        histogram: new LatencyHistogram(),
      }
      byOrg.set(orgId, id)
    }
    return id
  }
}
