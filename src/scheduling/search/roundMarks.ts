/**
 * A mark per number (a group's place), all cleared at once by starting a new round: each mark is the round
 * it was made in. A search over thousands of groups marks those it met without a pass to clear them after.
 */
export class RoundMarks {
  #round = 0
  #rounds = new Int32Array(0)

  /** Starts a round in which nothing is marked, with room for numbers below `size`. */
  begin(size = 0): void {
    this.ensure(size)
    if (this.#round === 0x7fffffff) {
      this.#rounds.fill(0)
      this.#round = 0
    }
    this.#round++
  }

  /** Room for numbers below `size`, keeping this round's marks. */
  ensure(size: number): void {
    if (size <= this.#rounds.length) return
    const rounds = new Int32Array(Math.max(size, this.#rounds.length * 2, 1024))
    rounds.set(this.#rounds)
    this.#rounds = rounds
  }

  /** Marks `number` (below the room made for) in this round: true when it was not marked in it yet. */
  mark(number: number): boolean {
    if (this.#rounds[number] === this.#round) return false
    this.#rounds[number] = this.#round
    return true
  }
}
