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

/**
 * Two kinds of mark per number (a group's place), each a stamp: kept through a round (`keep`), or made in
 * the round's current run (`mark`), those of a run all dropped at once by starting the next (`nextRun`). A
 * window search counts the groups of a run of hours without taking them as met before its page until it
 * knows the page is not reached in that run; one stamp a number is one memory read a check, where a mark of
 * each kind apart was two.
 */
export class RunMarks {
  #stamp = 0
  #kept = 0
  #stamps = new Int32Array(0)

  /** Starts a round in which nothing is marked, with room for numbers below `size`, and its first run. */
  begin(size: number): void {
    if (size > this.#stamps.length)
      this.#stamps = new Int32Array(Math.max(size, this.#stamps.length * 2, 1024))
    // A round takes a few dozen stamps: far from the end, numbering starts again.
    if (this.#stamp > 0x7fff0000) {
      this.#stamps.fill(0)
      this.#stamp = 0
    }
    this.#kept = ++this.#stamp
    ++this.#stamp
  }

  /** Drops the current run's marks. */
  nextRun(): void {
    ++this.#stamp
  }

  /** Marks `number` in the current run: true when it was neither kept nor marked in this run yet. */
  mark(number: number): boolean {
    const stamp = this.#stamps[number]
    if (stamp === this.#kept || stamp === this.#stamp) return false
    this.#stamps[number] = this.#stamp
    return true
  }

  /** Whether `number` is kept. */
  isKept(number: number): boolean {
    return this.#stamps[number] === this.#kept
  }

  /** Keeps `number` through the round. */
  keep(number: number): void {
    this.#stamps[number] = this.#kept
  }
}
