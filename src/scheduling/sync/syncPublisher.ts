import { fileURLToPath } from 'node:url'
import type { Clock } from '../../clock.js'
import type { JsonLine } from '../../ingest/jsonLines.js'
import { isJsonObject } from '../../jsonObject.js'
import { type Db, isStoreUnavailable } from '../../db/open.js'
import { inTransaction } from '../../db/sqlite.js'
import {
  FeedError,
  type FeedOptions,
  type FetchedValidators,
  fetchManifest,
  type Manifest,
  type ManifestOutput,
  type ManifestValidators,
  oversizedRecord,
  readNdjson,
  readNdjsonLines,
} from './feed.js'
import { FeedModel, REFERENCE_TYPES } from './feedModel.js'
import { findPublisher, listPublishers, type Publisher } from '../publishers.js'
import { slotIdPrefix } from '../model.js'
import { type BatchSlot, eachOfBatch, type SlotKind } from './slotLines.js'
import { SlotParser } from './slotParser.js'
import { CheckpointThread } from '../../db/checkpointThread.js'
import { deletePublisherSlots, SlotWriter } from './slotWriter.js'

export type SyncOutcome = 'synced' | 'unchanged' | 'skipped' | 'failed'

export interface SyncProblem {
  file: string
  line: number
  message: string
}

export interface SyncReport {
  publisher: string
  outcome: SyncOutcome
  /** Why it was skipped or failed. */
  message?: string
  read: number
  written: number
  skipped: number
  ms: number
  /** Bad records, each with file and line (the first MAX_REPORTED_PROBLEMS of them). */
  problems: SyncProblem[]
}

export interface SyncOptions extends FeedOptions {
  clock: Clock
  /** Called with the running count of records read, for a progress line on a TTY. */
  onProgress?: (publisher: string, read: number) => void
  /**
   * The slot parser's thread runs only on CPU time nothing else wants (SlotParser's `idleThread`): for an
   * import beside serving.
   */
  parseOnIdleCpu?: boolean
}

/** A publisher is fetched at most this often, whoever asks (the schedule, the CLI, another process). */
export const MIN_FETCH_INTERVAL_MS = 60_000
const MAX_REPORTED_PROBLEMS = 1_000
const PROGRESS_EVERY = 50_000
/**
 * A feed's Locations, Schedules and roles are held in memory while its slots stream in; past this many the
 * sync fails rather than let a hostile feed fill the memory (a national publisher has tens of thousands).
 */
export const MAX_REFERENCE_RECORDS = 250_000

type Json = Record<string, unknown>

const displayName = (url: URL) => (url.protocol === 'file:' ? fileURLToPath(url) : url.href)

/** Claims the publisher's fetch slot for this minute; false when someone fetched it less than a minute ago. */
const FETCHED_LATELY = 'fetched less than a minute ago; a publisher is fetched at most once a minute'

/** Why a fetch of the publisher now would be refused (the once-a-minute rule), or undefined when it would not. */
export function fetchRefusal(db: Db, slug: string, now: number): string | undefined {
  const last = db.prepare('SELECT last_fetch_at FROM publishers WHERE slug = ?').pluck().get(slug) as
    number | null | undefined
  if (last === undefined) return `no publisher "${slug}"`
  if (last === null || last <= now - MIN_FETCH_INTERVAL_MS) return undefined
  const seconds = Math.ceil((last + MIN_FETCH_INTERVAL_MS - now) / 1000)
  return `${FETCHED_LATELY}: try again in ${seconds} s`
}

function claimFetch(db: Db, slug: string, now: number): boolean {
  return (
    db
      .prepare(
        'UPDATE publishers SET last_fetch_at = ? WHERE slug = ? AND (last_fetch_at IS NULL OR last_fetch_at <= ?)',
      )
      .run(now, slug, now - MIN_FETCH_INTERVAL_MS).changes === 1
  )
}

/**
 * Records a sync's outcome, and its claim again: a sync begun inside the last publisher's transaction (see
 * syncPublishers) lost its claim if that one rolled back.
 */
function recordOutcome(db: Db, report: SyncReport, at: number): void {
  const { problems: _problems, ...summary } = report
  db.prepare(
    'UPDATE publishers SET last_sync = ?, last_fetch_at = max(ifnull(last_fetch_at, 0), ?) WHERE slug = ?',
  ).run(JSON.stringify({ at: new Date(at).toISOString(), ...summary }), at, report.publisher)
}

class Problems {
  readonly list: SyncProblem[] = []
  count = 0
  add(problem: SyncProblem) {
    this.count++
    if (this.list.length < MAX_REPORTED_PROBLEMS) this.list.push(problem)
  }
}

/** A record as a JSON object, or why it is not one. */
function objectOf(record: JsonLine['record']): Json | string {
  if ('problem' in record) return record.problem
  return isJsonObject(record.value) ? record.value : 'not a JSON object'
}

/** Reads every line of an output; a final line cut short means the file broke off, which fails the sync. */
async function eachRecord(
  output: ManifestOutput,
  manifest: Manifest,
  options: FeedOptions,
  problems: Problems,
  take: (record: Json, line: number) => void,
): Promise<number> {
  let read = 0
  for await (const entry of readNdjson(output.url, manifest, options)) {
    read++
    const { line, unterminated } = entry
    const record = objectOf(entry.record)
    if (typeof record === 'string') {
      if (unterminated) throw new FeedError(`${displayName(output.url)} ends in a partial record`)
      problems.add({ file: displayName(output.url), line, message: record })
    } else {
      take(record, line)
    }
  }
  return read
}

/**
 * Reads every Slot line of the outputs, file after file, through `parser`: `take` with each slot, the
 * series `seriesOf` gave its kind (asked once per kind of a batch), its line and file, in line order; a slot
 * whose kind has no series (its schedule is unknown) is a problem. Nothing is taken before `ready`: the
 * parser reads ahead meanwhile. The lines are counted in `report.read` as they are taken: a sync that fails
 * part-way says how far it read.
 */
async function eachSlot(
  outputs: readonly ManifestOutput[],
  manifest: Manifest,
  options: FeedOptions,
  problems: Problems,
  parser: SlotParser,
  report: Pick<SyncReport, 'read'>,
  idPrefix: string,
  ready: Promise<SlotWriting>,
  onAllRead?: () => void,
): Promise<void> {
  let writing: SlotWriting | undefined
  const writingReady = ready.then((given) => (writing = given))
  const last = outputs[outputs.length - 1]
  await parser.each(
    outputs,
    (output) => {
      const lines = readNdjsonLines(output.url, manifest, options)
      return output === last && onAllRead ? thenTell(lines, onAllRead) : lines
    },
    (batch, output) => {
      const { seriesOf, take } = writing as SlotWriting
      const file = displayName(output.url)
      report.read += batch.records
      if (batch.brokenEnd) throw new FeedError(`${file} ends in a partial record`)
      const series = batch.kinds.map(seriesOf)
      eachOfBatch(
        batch,
        idPrefix,
        (slot, line) => {
          const ofKind = series[slot.kind]
          if (ofKind !== undefined) return take(slot, ofKind, line, file)
          const { scheduleId } = batch.kinds[slot.kind] as SlotKind
          const message = `Slot ${slot.id.slice(idPrefix.length)} names an unknown Schedule/${scheduleId}`
          problems.add({ file, line, message })
        },
        (line, message) => problems.add({ file, line, message }),
      )
    },
    writingReady,
  )
}

/** The items, then `tell` once they all came (not when their reading fails or stops). */
async function* thenTell<T>(items: AsyncIterable<T>, tell: () => void): AsyncGenerator<T> {
  yield* items
  tell()
}

/** Where the slots of a batch go once the transaction is open: the series of a kind, and each slot. */
interface SlotWriting {
  seriesOf: (kind: SlotKind) => number | undefined
  take: (slot: BatchSlot, series: number, line: number, file: string) => void
}

const slotParser = (options: SyncOptions) =>
  new SlotParser(oversizedRecord(options.limits), { idleThread: options.parseOnIdleCpu })

/**
 * Syncs one publisher: fetch the manifest (no work when unchanged), read its reference files, then replace
 * the publisher's slots in one transaction. Any failure before the commit leaves the previous data as it was.
 */
export async function syncPublisher(
  db: Db,
  slug: string,
  options: SyncOptions,
  /** Given when several publishers are synced in turn, so that they share the threads. */
  shared?: SyncThreads,
): Promise<SyncReport> {
  const threads = shared ?? { parser: slotParser(options) }
  try {
    return await completeSync(db, await beginSync(db, slug, options, threads), options)
  } finally {
    if (!shared) await threads.parser.close()
  }
}

/** The threads a sync works with beside the calling one. */
interface SyncThreads {
  parser: SlotParser
  /**
   * Where the file is checkpointed after each publisher's commit, while the next one is read (when several
   * are synced in turn; the connection's automatic checkpoints are off meanwhile).
   */
  checkpoints?: CheckpointThread
}

/**
 * Slot files being read ahead: `start` hands them the writing once the transaction is open; `stop` ends a
 * reading not started yet (`reason`) and resolves once the parser's thread is done with it.
 */
interface SlotRead {
  done: Promise<void>
  start: (writing: SlotWriting) => void
  stop: (reason: Error) => Promise<void>
}

/**
 * A publisher's sync as far as it goes before its reference files: claimed, its manifest fetched and its slot
 * files being read ahead; or its outcome already known (no publisher, fetched lately, unchanged, failed), for
 * `completeSync` to record.
 */
interface BegunSync {
  slug: string
  started: number
  report: SyncReport
  /** When it was fetched before this claim: given back when the run is interrupted before it completes. */
  fetchedBefore?: number | null
  known?: { outcome: SyncOutcome; message: string }
  feed?: FetchedFeed
}

const failureOf = (error: unknown) =>
  error instanceof FeedError ? error.message : `the store: ${(error as Error).message}`

/** A full disk or an I/O error fails a publisher as a broken feed does; anything else is a fault. */
const failsThePublisher = (error: unknown) => error instanceof FeedError || isStoreUnavailable(error)

/**
 * Begins a sync: claims the publisher (the once-a-minute rule), fetches its manifest and starts reading its
 * slot files ahead (`onSlotsRead` once they all came). Writes nothing but the claim, so it may run inside
 * another publisher's transaction (see syncPublishers).
 */
async function beginSync(
  db: Db,
  slug: string,
  options: SyncOptions,
  threads: SyncThreads,
  onSlotsRead?: () => void,
): Promise<BegunSync> {
  const started = options.clock()
  const report: SyncReport = {
    publisher: slug,
    outcome: 'failed',
    read: 0,
    written: 0,
    skipped: 0,
    ms: 0,
    problems: [],
  }
  const begun: BegunSync = { slug, started, report }
  const known = (outcome: SyncOutcome, message: string) => {
    begun.known = { outcome, message }
    return begun
  }
  const publisher = findPublisher(db, slug)
  if (!publisher) return known('failed', `no publisher "${slug}"`)
  const state = db
    .prepare(
      `SELECT last_fetch_at AS fetchedBefore, manifest_etag AS etag, manifest_last_modified AS lastModified,
         manifest_sha256 AS sha256 FROM publishers WHERE slug = ?`,
    )
    .get(slug) as ManifestValidators & { fetchedBefore: number | null }
  if (!claimFetch(db, slug, started)) return known('skipped', FETCHED_LATELY)
  begun.fetchedBefore = state.fetchedBefore
  try {
    const fetched = await fetchManifest(publisher.manifestUrl, state, options)
    if (!fetched.changed) return known('unchanged', 'manifest unchanged since the last sync')
    const problems = new Problems()
    const slots = readSlotsAhead(
      fetched.manifest,
      slug,
      options,
      problems,
      threads.parser,
      report,
      onSlotsRead,
    )
    begun.feed = { ...fetched, publisher, threads, problems, slots }
    return begun
  } catch (error) {
    if (!failsThePublisher(error)) throw error
    return known('failed', failureOf(error))
  }
}

/** Completes a begun sync: its reference files and its transaction, or the outcome known; records it. */
async function completeSync(db: Db, begun: BegunSync, options: SyncOptions): Promise<SyncReport> {
  const { report, started } = begun
  const settle = (outcome: SyncOutcome, message?: string) => {
    report.outcome = outcome
    if (message) report.message = message
    report.ms = options.clock() - started
  }
  const finish = (outcome: SyncOutcome, message?: string) => {
    settle(outcome, message)
    if (outcome !== 'skipped') recordOutcome(db, report, started)
    return report
  }
  if (begun.known) return finish(begun.known.outcome, begun.known.message)
  const feed = begun.feed as FetchedFeed
  try {
    // The outcome is recorded in the sync's own transaction: every commit to the main file makes each
    // server drop what it keeps of it (answers, known keys), so a sync commits as few times as it can.
    await importFeed(db, feed, report, options, () => {
      report.problems = feed.problems.list
      report.skipped = feed.problems.count
      settle('synced')
      recordOutcome(db, report, started)
    })
    return report
  } catch (error) {
    // Recorded where the operator looks (svc top, the dashboard), and the next publishers may still fit.
    if (!failsThePublisher(error)) throw error
    // What the rolled-back transaction spilled into the WAL goes back to the disk.
    giveBackWal(db)
    return finish('failed', failureOf(error))
  }
}

/** Stops a sync begun and not completed (the run was interrupted); its claim is given back. */
async function abandonSync(db: Db, begun: BegunSync): Promise<void> {
  await begun.feed?.slots.stop(new FeedError('the sync was interrupted'))
  if (begun.fetchedBefore === undefined) return
  db.prepare('UPDATE publishers SET last_fetch_at = ? WHERE slug = ? AND last_fetch_at = ?').run(
    begun.fetchedBefore,
    begun.slug,
    begun.started,
  )
}

/** Checkpoints the WAL and truncates it, when no reader holds it; a busy file is left for the next checkpoint. */
function giveBackWal(db: Db): void {
  try {
    db.pragma('wal_checkpoint(TRUNCATE)')
  } catch {
    // Another connection is writing: its own checkpoint will do.
  }
}

interface FetchedFeed {
  publisher: Publisher
  manifest: Manifest
  validators: FetchedValidators
  threads: SyncThreads
  problems: Problems
  slots: SlotRead
}

/**
 * Starts reading the slot files ahead (the parser's thread parses their first lines while this thread reads
 * the reference files); the slots wait for the transaction, which `start` opens to them.
 */
function readSlotsAhead(
  manifest: Manifest,
  slug: string,
  options: SyncOptions,
  problems: Problems,
  parser: SlotParser,
  report: SyncReport,
  onAllRead?: () => void,
): SlotRead {
  let start!: (writing: SlotWriting) => void
  let refuse!: (reason: Error) => void
  const writing = new Promise<SlotWriting>((resolve, reject) => {
    start = resolve
    refuse = reject
  })
  const outputs = manifest.outputs.filter((candidate) => candidate.type === 'Slot')
  const done = eachSlot(
    outputs,
    manifest,
    options,
    problems,
    parser,
    report,
    slotIdPrefix(slug),
    writing,
    onAllRead,
  )
  // Awaited in the transaction; a failure of the reading while the reference files are read is seen there.
  done.catch(() => undefined)
  const stop = async (reason: Error) => {
    refuse(reason)
    await done.catch(() => undefined)
  }
  return { done, start, stop }
}

async function importFeed(
  db: Db,
  feed: FetchedFeed,
  report: SyncReport,
  options: SyncOptions,
  beforeCommit: () => void,
): Promise<void> {
  const { publisher, manifest, validators, threads, problems, slots } = feed
  const model = new FeedModel(publisher.slug)
  let references = 0
  // Counted here: report.read moves by batches of lines.
  let slotsTaken = 0
  const progress = () => {
    slotsTaken++
    if (options.onProgress && slotsTaken % PROGRESS_EVERY === 0)
      options.onProgress(publisher.slug, references + slotsTaken)
  }
  try {
    references = await readReferences(model, manifest, options, problems, report)
    const syncedAt = new Date(options.clock()).toISOString()
    // The WAL starts over at a transaction's beginning only when every page in it is checkpointed: the last
    // publisher's (asked at its commit, mostly done by now) and this one's small writes since.
    threads.checkpoints?.request()
    await threads.checkpoints?.settled()
    // Slots stream straight into the open transaction, so memory stays flat whatever the feed's size; the
    // transaction spans the downloads, and a file that breaks off rolls everything back.
    await inTransaction(db, async () => {
      deletePublisherSlots(db, publisher.slug)
      // The sync's slots go to a part of their own (see migration 5): they sit together in the slot order,
      // so the commit writes few of its pages however many publishers are stored.
      const part = db
        .prepare('UPDATE sched_part_counter SET last = last + 1 RETURNING last')
        .pluck()
        .get() as number
      const writer = new SlotWriter(db, publisher.slug, part)
      slots.start(slotWriting(model, writer, slotIdPrefix(publisher.slug), problems, progress))
      await slots.done
      writer.finish()
      db.prepare(
        `UPDATE publishers SET manifest_etag = ?, manifest_last_modified = ?, manifest_sha256 = ?,
           transaction_time = ?, synced_at = ?, slot_count = ?, slot_part = ? WHERE slug = ?`,
      ).run(
        validators.etag,
        validators.lastModified,
        validators.sha256,
        manifest.transactionTime,
        syncedAt,
        writer.written,
        part,
        publisher.slug,
      )
      report.written = writer.written
      beforeCommit()
    })
  } finally {
    // A sync that fails before its transaction stops the reading; either way the parser's thread is done
    // with this feed before the next one's lines go to it.
    await slots.stop(new FeedError('the sync stopped before its slots were written'))
  }
  threads.checkpoints?.request()
}

/** Where a publisher's slots go: each kind's series of `model`'s schedule, each slot into `writer`. */
function slotWriting(
  model: FeedModel,
  writer: SlotWriter,
  idPrefix: string,
  problems: Problems,
  progress: () => void,
): SlotWriting {
  return {
    seriesOf: (kind) => {
      const schedule = model.schedules.get(kind.scheduleId)
      if (!schedule) return undefined
      return writer.seriesId(schedule, {
        serviceTypes: kind.serviceTypes.length > 0 ? kind.serviceTypes : schedule.serviceTypes,
        appointmentType: kind.appointmentType ?? null,
        accepting: kind.accepting ?? schedule.accepting ?? null,
      })
    },
    take: (slot, series, line, file) => {
      progress()
      if (writer.insertSlot(series, slot)) return
      const message = `Slot ${slot.id.slice(idPrefix.length)} repeats an earlier line`
      problems.add({ file, line, message })
    },
  }
}

/**
 * Reads the reference files into `model`, type after type (REFERENCE_TYPES: what a record names comes first);
 * returns how many records they held.
 */
async function readReferences(
  model: FeedModel,
  manifest: Manifest,
  options: SyncOptions,
  problems: Problems,
  report: SyncReport,
): Promise<number> {
  let references = 0
  for (const type of REFERENCE_TYPES) {
    for (const output of manifest.outputs.filter((candidate) => candidate.type === type)) {
      report.read += await eachRecord(output, manifest, options, problems, (record, line) => {
        if (++references > MAX_REFERENCE_RECORDS) {
          throw new FeedError(
            `${displayName(output.url)}:${line}: the feed names more than ${MAX_REFERENCE_RECORDS.toLocaleString('en-US')} Locations, Schedules and roles, the limit of one publisher`,
          )
        }
        const problem = model.add(record, type)
        if (problem) problems.add({ file: displayName(output.url), line, message: problem })
      })
    }
  }
  return references
}

/** Syncs every enabled publisher (or the one named), one after another; a failure does not stop the others. */
export async function syncPublishers(
  db: Db,
  options: SyncOptions & { only?: string },
): Promise<SyncReport[]> {
  const slugs = options.only
    ? [options.only]
    : listPublishers(db)
        .filter((publisher) => publisher.enabled)
        .map((publisher) => publisher.slug)
  const reports: SyncReport[] = []
  const threads: SyncThreads = { parser: slotParser(options) }
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number
  if (slugs.length > 1) {
    threads.checkpoints = new CheckpointThread(db.name)
    db.pragma('wal_autocheckpoint = 0')
  }
  // The next publisher is begun once this one's slot files are all read: the parser's thread parses its first
  // slot lines while this one's slot keys are sorted and committed (it had nothing to do then).
  const begun = new Map<number, Promise<BegunSync>>()
  const begin = (index: number): Promise<BegunSync> => {
    const following = () => {
      if (index + 1 >= slugs.length || begun.has(index + 1)) return
      const next = begin(index + 1)
      // Awaited in its turn; a fault of the store is not left unhandled until then.
      next.catch(() => undefined)
      begun.set(index + 1, next)
    }
    return beginSync(db, slugs[index] as string, options, threads, following)
  }
  try {
    for (let index = 0; index < slugs.length; index++) {
      const sync = await (begun.get(index) ?? begin(index))
      begun.delete(index)
      reports.push(await completeSync(db, sync, options))
      // Interrupted: the publisher under way rolled back; the others are left as they are.
      if (options.signal?.aborted) throw new FeedError(`interrupted while syncing ${sync.slug}`)
    }
  } finally {
    for (const next of begun.values()) await next.then((sync) => abandonSync(db, sync)).catch(() => undefined)
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`)
    await threads.parser.close()
    await threads.checkpoints?.close()
  }
  if (reports.some((report) => report.outcome === 'synced')) db.exec('PRAGMA main.optimize')
  return reports
}
