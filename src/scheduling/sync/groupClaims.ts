/**
 * Groups sent to the slot parser's thread and not answered yet, at most, that claims keep apart: more than it
 * is ever sent ahead (slotParser.ts), so that a slot is never reused while its group is on the thread.
 */
const CLAIM_SLOTS = 64

/**
 * Who reads each group of slot lines sent to the parser's thread: the thread, or the caller when the group is
 * due before the thread began it (a thread starved by a busy machine). Shared memory, one slot per group (its
 * number modulo CLAIM_SLOTS): -(number + 1) while unclaimed, number + 1 once claimed; whoever swaps first
 * reads it, and the thread answers a group it lost at once, empty.
 */
export class GroupClaims {
  readonly #slots: Int32Array

  /** `shared`: the claims' memory, as another thread's `shared` gave it; new memory when absent. */
  constructor(shared?: SharedArrayBuffer) {
    this.#slots = new Int32Array(shared ?? new SharedArrayBuffer(CLAIM_SLOTS * Int32Array.BYTES_PER_ELEMENT))
  }

  get shared(): SharedArrayBuffer {
    return this.#slots.buffer as SharedArrayBuffer
  }

  /** Group `sequence` is sent: unclaimed. */
  offer(sequence: number): void {
    Atomics.store(this.#slots, sequence % CLAIM_SLOTS, -(sequence + 1))
  }

  /** Claims group `sequence`; false when the other side claimed it first. */
  claim(sequence: number): boolean {
    const unclaimed = -(sequence + 1)
    return Atomics.compareExchange(this.#slots, sequence % CLAIM_SLOTS, unclaimed, sequence + 1) === unclaimed
  }
}
