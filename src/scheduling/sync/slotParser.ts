import { Worker } from 'node:worker_threads'
import type { Lines } from '../../ingest/lines.js'
import { GroupClaims } from './groupClaims.js'
import { readSlotLines, type SlotBatch } from './slotLines.js'

/** A sync's first slot lines are read on the calling thread: a small sync (the demo's) never starts the thread. */
const INLINE_LINES = 20_000
/** Lines go to the thread in groups of about this many bytes: a message costs tens of microseconds. */
const GROUP_BYTES = 512 * 1024
/**
 * Groups on the thread not yet answered, at most: past them the calling thread reads the next group itself
 * rather than wait (parsing a slot costs more than writing it, so the thread alone kept the writer idle a
 * fifth of a national sync; 2 to 6 measured, 5 the fastest).
 */
const THREAD_BACKLOG = 5
/**
 * Groups read ahead, at most, before the caller is ready to settle them (see `each`): enough for the thread to
 * parse while a national publisher's reference files are read on the calling thread (about 6 groups).
 */
const READ_AHEAD_GROUPS = 24

/** Whether the caller of `each` is ready for batches, and whether a failure came before it was. */
interface Readiness {
  settling: Promise<void>
  isReady: () => boolean
  failure: { beforeReady: boolean }
}

/**
 * A group on the thread (or read in line), with the source it came from and, once read, its slots. One sent
 * to an idle thread keeps its lines and its number (`onThread`), to be read here if the thread has not begun
 * it when it is due.
 */
interface Pending<Source> {
  source: Source
  sent: Promise<SlotBatch | null>
  batch?: SlotBatch
  onThread?: { lines: Lines; sequence: number }
}

const PARSER_YOUNG_GENERATION_MB = 8

/**
 * Reads slot lines into slots on a thread of its own, so that parsing a feed (JSON, then the Slot's members:
 * about half of a sync's work) runs beside the writing on the calling thread on a machine with two cores or
 * more; when the thread falls behind, the calling thread reads a group itself. Batches are settled in the
 * order the lines came, whoever read them; writing stays on the caller's thread, in its one transaction per
 * publisher.
 */
export class SlotParser {
  #worker: Worker | undefined
  #waiting: { resolve: (batch: SlotBatch | null) => void; reject: (error: Error) => void }[] = []
  /** Who reads each group sent to the thread: one an idle thread has not begun when it is due is read here. */
  readonly #claims = new GroupClaims()
  #sent = 0
  #failure: Error | undefined
  #lines = 0
  readonly #threadBacklog: number
  readonly #idleThread: boolean

  /**
   * `oversized`: what a line past the record limit is refused with. `threadBacklog`: groups the thread may hold
   * unanswered before the caller reads the next one itself. `idleThread`: the thread runs only on CPU time
   * nothing else wants (threadPriority.ts), so that serving on the same cores is never kept waiting by it: a
   * thread starved by a busy machine then begins no group, the caller reads each as it is due, and the sync
   * goes on at the caller's pace.
   */
  constructor(
    private readonly oversized: string,
    options: { threadBacklog?: number; idleThread?: boolean } = {},
  ) {
    this.#threadBacklog = options.threadBacklog ?? THREAD_BACKLOG
    this.#idleThread = options.idleThread ?? false
  }

  /**
   * Reads every chunk of each source in turn and hands each batch of slots, in order, to `settle` with the
   * source it came from. The thread is kept busy across sources: the next source is opened while the last
   * groups of one are still being parsed (each file waited for its first group, and drained its last). A
   * throw from `settle` or a source stops the reading (batches still on the thread are dropped).
   *
   * Nothing is settled before `ready` resolves: until then the lines go to the thread, up to
   * READ_AHEAD_GROUPS ahead, so that it parses while the caller does work of its own (a sync's reference
   * files); a `ready` that rejects stops the reading with its reason. Reading ahead costs nothing when it
   * fails: a source that fails before the caller is ready (a server that drops a connection left waiting)
   * is read again from the start once it is, and only a failure then stops the reading.
   */
  async each<Source>(
    sources: readonly Source[],
    open: (source: Source) => AsyncIterable<Lines>,
    settle: (batch: SlotBatch, source: Source) => void,
    ready: Promise<unknown> = Promise.resolve(),
  ): Promise<void> {
    let isReady = false
    const settling = ready.then(() => {
      isReady = true
    })
    // Awaited before the first settle; a rejection seen there first is not left unhandled.
    settling.catch(() => undefined)
    // Taken when the failure happens: the caller may be ready by the time the thread's last answers are in.
    const failure = { beforeReady: false }
    try {
      await this.#read(sources, open, settle, { settling, isReady: () => isReady, failure })
    } catch (error) {
      if (!failure.beforeReady) throw error
      // Nothing was settled: read again from the start once the caller is ready (or stop with its reason).
      await settling
      await this.#read(sources, open, settle, { settling, isReady: () => true, failure })
    }
  }

  async #read<Source>(
    sources: readonly Source[],
    open: (source: Source) => AsyncIterable<Lines>,
    settle: (batch: SlotBatch, source: Source) => void,
    { settling, isReady, failure }: Readiness,
  ): Promise<void> {
    const pending: Pending<Source>[] = []
    let group: Lines[] = []
    let groupBytes = 0
    /** Settles the groups already answered, oldest first, without waiting on the thread. */
    const settleReady = () => {
      if (!isReady()) return
      for (let batch = pending[0]?.batch; batch; batch = pending[0]?.batch)
        settle(batch, (pending.shift() as Pending<Source>).source)
    }
    const readInLine = (source: Source, lines: Lines) => {
      const batch = readSlotLines(lines, this.oversized)
      pending.push({ source, sent: Promise.resolve(batch), batch })
    }
    /**
     * Sends the group to the thread, or reads it in line when the thread is behind and the caller ready. Behind
     * counts the groups the thread holds, those read here in its place included: a starved thread is never
     * sent more than `threadBacklog` groups.
     */
    const send = (source: Source) => {
      const lines = joinLines(group)
      if (isReady() && this.#waiting.length >= this.#threadBacklog) {
        readInLine(source, lines)
      } else {
        const sequence = this.#sent++
        // A joined group is a buffer of its own, moved to the thread unless kept to be read here.
        const sent = this.#send(lines, sequence, group.length > 1 && !this.#idleThread)
        const entry: Pending<Source> = {
          source,
          sent,
          ...(this.#idleThread ? { onThread: { lines, sequence } } : {}),
        }
        // Settled in order below; a failure seen first by another is not left unhandled.
        sent.then((batch) => (entry.batch = batch ?? undefined)).catch(() => undefined)
        pending.push(entry)
      }
      group = []
      groupBytes = 0
    }
    const settleOldest = async () => {
      await settling
      const oldest = pending.shift() as Pending<Source>
      const { onThread } = oldest
      if (!oldest.batch && onThread && this.#claims.claim(onThread.sequence))
        settle(readSlotLines(onThread.lines, this.oversized), oldest.source)
      // Claimed by the thread (or read in line): its answer is the group's slots.
      else settle((await oldest.sent) as SlotBatch, oldest.source)
    }
    try {
      for (const source of sources) {
        for await (const chunk of open(source)) {
          this.#lines += chunk.bounds.length / 2
          // Nothing is on the thread yet while lines are read in line: the first group goes past them.
          if (this.#lines <= INLINE_LINES) readInLine(source, chunk)
          else {
            group.push(chunk)
            groupBytes += chunk.data.length
            if (groupBytes >= GROUP_BYTES) send(source)
          }
          settleReady()
          // Memory stays flat: the thread's groups and one read in line, at most (more before `ready`).
          while (pending.length > (isReady() ? this.#threadBacklog : READ_AHEAD_GROUPS)) await settleOldest()
        }
        // A group never joins two sources' lines: their line numbers each start at 1.
        if (group.length > 0) send(source)
      }
      while (pending.length > 0) await settleOldest()
      // A source with no lines settles nothing: the caller's reason not to be ready still stops the read.
      await settling
    } catch (error) {
      failure.beforeReady = !isReady()
      throw error
    } finally {
      // Groups an idle thread has not begun are claimed, so that it answers them at once, empty: a stopped read
      // waits for the one it is reading at most. The thread answers in order: batches of a stopped read are
      // taken off before the next read's.
      for (const { onThread } of pending) if (onThread) this.#claims.claim(onThread.sequence)
      await Promise.allSettled(pending.map(({ sent }) => sent))
    }
  }

  /** Stops the thread, if one was started. */
  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }

  /**
   * Sends the lines to the thread as group `sequence`, unclaimed, and resolves with its answer: their bytes
   * moved when `movable` and a buffer of their own, else copied.
   */
  #send(lines: Lines, sequence: number, movable: boolean): Promise<SlotBatch | null> {
    if (this.#failure) return Promise.reject(this.#failure)
    const worker = (this.#worker ??= this.#start())
    this.#claims.offer(sequence)
    const whole = lines.data.byteOffset === 0 && lines.data.buffer.byteLength === lines.data.length
    const data = movable && whole ? lines.data : new Uint8Array(lines.data)
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject })
      worker.postMessage({ ...lines, data, sequence }, [data.buffer as ArrayBuffer])
    })
  }

  #start(): Worker {
    // From the TypeScript sources (tests, benchmarks) the thread loads tsx first and then its .ts file.
    const fromSources = import.meta.url.endsWith('.ts')
    const program = new URL(`./slotParserThread.${fromSources ? 'ts' : 'js'}`, import.meta.url)
    const options = {
      workerData: { oversized: this.oversized, idle: this.#idleThread, claims: this.#claims.shared },
      // Its garbage is each group's parsed lines, gone once posted: the default young generation (about 34 MB
      // in use) only added to RSS. 8 MB: the same rate (4 MB cost 7 %), 20-35 MB less peak RSS.
      resourceLimits: { maxYoungGenerationSizeMb: PARSER_YOUNG_GENERATION_MB },
    }
    const worker = fromSources
      ? new Worker(
          `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(program.href)}, __filename))`,
          {
            ...options,
            eval: true,
          },
        )
      : new Worker(program, options)
    worker.on('message', (batch: SlotBatch | null) => this.#waiting.shift()?.resolve(batch))
    const fail = (error: Error) => {
      this.#failure = error
      for (const waiting of this.#waiting.splice(0)) waiting.reject(error)
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the slot parser's thread stopped (exit code ${code})`)))
    return worker
  }
}

/** Consecutive chunks of lines as one: their bytes joined, each line's range moved by what came before. */
function joinLines(group: Lines[]): Lines {
  if (group.length === 1) return group[0] as Lines
  const bounds: number[] = []
  let offset = 0
  for (const { data, bounds: own } of group) {
    for (const bound of own) bounds.push(bound < 0 ? bound : bound + offset)
    offset += data.length
  }
  const last = group[group.length - 1] as Lines
  return {
    first: (group[0] as Lines).first,
    data: Buffer.concat(group.map((lines) => lines.data)),
    bounds,
    ...(last.unterminated ? { unterminated: true } : {}),
  }
}
