import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import { addPublisher } from '../src/scheduling/publishers.js'
import { eachOfBatch, readSlotLines } from '../src/scheduling/sync/slotLines.js'
import { GroupClaims } from '../src/scheduling/sync/groupClaims.js'
import { SlotParser } from '../src/scheduling/sync/slotParser.js'
import { fetchRefusal, syncPublisher, syncPublishers } from '../src/scheduling/sync/syncPublisher.js'
import { linesOf } from '../src/ingest/lines.js'
import { runCli, runCliJson } from './support/cli.js'
import { startFeedServer } from './support/feedServer.js'

/**
 * A feed large enough that its slot lines past the first 20,000 are read on the slot parser's thread
 * (src/scheduling/sync/slotParser.ts): what is stored and refused must be what reading them in line would give.
 */
const SLOTS = 30_000
const STU1 = 'http://hl7.org/fhir/uv/smart-scheduling-links/StructureDefinition/'
const FROM = Date.parse('2026-12-01T00:00:00Z')
/**
 * Lines that repeat an earlier line: one read in line, one read on the thread repeating a line read in line,
 * one repeating the line just before it (still waiting to be written), and one repeating a line whose
 * schedule, status and start many lines share under other ids (those are stored: only the id differs).
 */
const REPEATS = new Map([
  [15_000, 14_999],
  [23_000, 3],
  [26_000, 25_999],
  [28_000, 500],
])
/** Lines of the slot file (1-based) that are refused, and why. */
const REFUSED = new Map([
  [15_000, /^Slot t14999 repeats an earlier line$/],
  [21_000, /^not valid JSON/],
  [23_000, /^Slot t3 repeats an earlier line$/],
  [24_000, /^Slot bad-status has an unknown status "open"/],
  [26_000, /^Slot t25999 repeats an earlier line$/],
  [27_000, /^Slot orphan names an unknown Schedule\/s-nowhere$/],
  [28_000, /^Slot t500 repeats an earlier line$/],
])
const BLANK_LINE = 25_000

function slotLine(line: number): string {
  const repeated = REPEATS.get(line)
  if (repeated !== undefined) return slotLine(repeated)
  if (line === BLANK_LINE) return '   '
  if (line === 21_000) return '{"resourceType": "Slot", "id": '
  const start = FROM + (line % 500) * 900_000
  const slot: Record<string, unknown> = {
    resourceType: 'Slot',
    id: `t${line}`,
    schedule: { reference: `Schedule/s${line % 7}` },
    status: line % 5 === 0 ? 'busy' : 'free',
    start: new Date(start).toISOString(),
    end: new Date(start + 900_000).toISOString(),
  }
  if (line === 24_000) Object.assign(slot, { id: 'bad-status', status: 'open' })
  if (line === 27_000) Object.assign(slot, { id: 'orphan', schedule: { reference: 'Schedule/s-nowhere' } })
  if (line === 22_222 || line === 2_222) {
    // Every member a slot can carry of its own, on a line read in line (2,222) and on one read on the thread.
    Object.assign(slot, {
      serviceType: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/service-type', code: '124' }] },
      ],
      appointmentType: {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0276', code: 'WALKIN' }],
      },
      extension: [
        { url: `${STU1}booking-deep-link`, valueUrl: 'https://book.example.org/slot?é=ü' },
        { url: `${STU1}booking-phone`, valueContactPoint: { system: 'phone', value: '555-0100' } },
        { url: `${STU1}slot-capacity`, valueInteger: 3 },
        {
          url: `${STU1}patient-type`,
          valueCoding: { system: 'http://terminology.hl7.org/CodeSystem/accepting-patients', code: 'newpt' },
        },
      ],
    })
  }
  return JSON.stringify(slot)
}

/** A second slot file of `count` more slots; the lines `refused` says are not JSON. */
function moreSlotLines(count: number, refused: (line: number) => boolean): string {
  return Array.from({ length: count }, (_, index) => {
    if (refused(index + 1)) return '{"resourceType": "Slot"'
    const start = FROM + (index % 400) * 900_000
    return JSON.stringify({
      resourceType: 'Slot',
      id: `m${index + 1}`,
      schedule: { reference: `Schedule/s${index % 7}` },
      status: 'free',
      start: new Date(start).toISOString(),
      end: new Date(start + 900_000).toISOString(),
      extension: [{ url: `${STU1}booking-deep-link`, valueUrl: `https://book.example.org/m/${index + 1}` }],
    })
  }).join('\n')
}

function writeFeed(dir: string, lastLine?: string, more?: string): string {
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'locations.ndjson'),
    `${JSON.stringify({ resourceType: 'Location', id: 'l0', name: 'Clinic', address: { city: 'Boston', state: 'MA' } })}\n`,
  )
  writeFileSync(
    join(dir, 'schedules.ndjson'),
    Array.from({ length: 7 }, (_, index) =>
      JSON.stringify({
        resourceType: 'Schedule',
        id: `s${index}`,
        serviceType: [
          { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/service-type', code: '57' }] },
        ],
        actor: [{ reference: 'Location/l0' }],
      }),
    ).join('\n'),
  )
  const lines = Array.from({ length: SLOTS }, (_, index) => slotLine(index + 1))
  writeFileSync(join(dir, 'slots.ndjson'), `${lines.join('\n')}\n${lastLine ?? ''}`)
  if (more !== undefined) writeFileSync(join(dir, 'more-slots.ndjson'), more)
  writeFileSync(
    join(dir, '$bulk-publish'),
    JSON.stringify({
      // A new manifest for a new publication: an unchanged one is not read again.
      transactionTime: new Date(FROM + (lastLine === undefined ? 0 : 60_000)).toISOString(),
      output: [
        { type: 'Location', url: 'locations.ndjson' },
        { type: 'Schedule', url: 'schedules.ndjson' },
        { type: 'Slot', url: 'slots.ndjson' },
        ...(more === undefined ? [] : [{ type: 'Slot', url: 'more-slots.ndjson' }]),
      ],
    }),
  )
  return join(dir, '$bulk-publish')
}

const dir = mkdtempSync(join(tmpdir(), 'svc-slot-thread-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The stored form of a slot and its series, for comparing the two lines that carry every member. */
function storedSlot(db: ReturnType<typeof openDatabase>, id: string) {
  return db
    .prepare(
      `SELECT s.status, s.start_ms, s.end_ms, s.booking_link, s.booking_phone, s.capacity,
              r.service_types, r.appointment_type, r.accepting
         FROM sched_slots s JOIN sched_series r ON r.id = s.series_id WHERE s.id = ?`,
    )
    .get(id) as Record<string, unknown> | undefined
}

describe('slot lines read on the parser thread', () => {
  it('store and refuse exactly what their lines say, each refusal with its file and line', async () => {
    const db = openDatabase(join(dir, 'in-process', 'svc.db'))
    addPublisher(db, { slug: 'big', manifestUrl: writeFeed(join(dir, 'feed')) })
    const report = await syncPublisher(db, 'big', { clock: () => FROM })
    expect(report.outcome).toBe('synced')
    // 1 location, 7 schedules, every slot line but the blank one.
    expect(report.read).toBe(1 + 7 + SLOTS - 1)
    expect(report.written).toBe(SLOTS - 1 - REFUSED.size)
    expect(report.problems.map((problem) => problem.line)).toEqual([...REFUSED.keys()])
    for (const problem of report.problems) {
      expect(problem.file).toBe(join(dir, 'feed', 'slots.ndjson'))
      expect(problem.message).toMatch(REFUSED.get(problem.line) as RegExp)
    }
    const threaded = storedSlot(db, 'big:t22222')
    expect(threaded).toEqual(storedSlot(db, 'big:t2222'))
    expect(threaded).toMatchObject({
      status: 0,
      booking_link: 'https://book.example.org/slot?é=ü',
      booking_phone: '555-0100',
      capacity: 3,
      appointment_type: 'WALKIN',
      accepting: 'newpt',
    })
    expect(JSON.parse(threaded?.service_types as string)).toEqual([
      { system: 'http://terminology.hl7.org/CodeSystem/service-type', code: '124' },
    ])
    expect(storedSlot(db, 'big:t29999')).toMatchObject({ status: 0, booking_link: null, capacity: null })
    expect(storedSlot(db, 'big:t30000')).toMatchObject({ status: 1 })
    db.close()
  })

  it("keep each file's lines apart and in order when the next file opens with the last one's groups still out", async () => {
    // 60,000 more lines in a second file: the first file's last group is still on the thread when the
    // second file opens, and the second's groups are settled as the thread answers them.
    const MORE = 60_000
    // Spread over the file, so that a group settled out of turn would show in the order of the refusals.
    const refused = (line: number) => line % 5_000 === 1_234
    const refusedLines = Array.from({ length: MORE }, (_, index) => index + 1).filter(refused)
    const db = openDatabase(join(dir, 'two-files', 'svc.db'))
    const feed = join(dir, 'feed-two-files')
    addPublisher(db, { slug: 'big', manifestUrl: writeFeed(feed, undefined, moreSlotLines(MORE, refused)) })
    const report = await syncPublisher(db, 'big', { clock: () => FROM })
    expect(report.outcome).toBe('synced')
    expect(report.read).toBe(1 + 7 + SLOTS - 1 + MORE)
    expect(report.written).toBe(SLOTS - 1 - REFUSED.size + MORE - refusedLines.length)
    expect(report.problems.map(({ file, line }) => [file, line])).toEqual([
      ...[...REFUSED.keys()].map((line) => [join(feed, 'slots.ndjson'), line]),
      ...refusedLines.map((line) => [join(feed, 'more-slots.ndjson'), line]),
    ])
    const links = db.prepare("SELECT id, booking_link FROM sched_slots WHERE id GLOB 'big:m*'").all() as {
      id: string
      booking_link: string
    }[]
    expect(links).toHaveLength(MORE - refusedLines.length)
    for (const { id, booking_link } of links)
      expect(booking_link).toBe(`https://book.example.org/m/${id.slice(5)}`)
    db.close()
  })

  it('fail the sync and keep what was stored when the file breaks off inside a line', async () => {
    const db = openDatabase(join(dir, 'broken', 'svc.db'))
    const manifest = writeFeed(join(dir, 'feed-broken'))
    addPublisher(db, { slug: 'big', manifestUrl: manifest })
    expect((await syncPublisher(db, 'big', { clock: () => FROM })).outcome).toBe('synced')
    writeFeed(join(dir, 'feed-broken'), '{"resourceType": "Slot", "id": "cut')
    const report = await syncPublisher(db, 'big', { clock: () => FROM + 120_000 })
    expect(report).toMatchObject({
      outcome: 'failed',
      message: expect.stringMatching(/ends in a partial record$/),
    })
    expect(db.prepare('SELECT count(*) FROM sched_slots').pluck().get()).toBe(SLOTS - 1 - REFUSED.size)
    db.close()
  })

  it('say how far they read when a later slot file breaks off', async () => {
    const db = openDatabase(join(dir, 'broken-later', 'svc.db'))
    const more = `${moreSlotLines(100, () => false)}\n{"resourceType": "Slot", "id": "cut`
    addPublisher(db, { slug: 'big', manifestUrl: writeFeed(join(dir, 'feed-broken-later'), undefined, more) })
    const report = await syncPublisher(db, 'big', { clock: () => FROM })
    expect(report).toMatchObject({ outcome: 'failed', message: expect.stringMatching(/partial record$/) })
    // The first file's lines, the second's and its partial last line.
    expect(report.read).toBe(1 + 7 + SLOTS - 1 + 100 + 1)
    expect(db.prepare('SELECT count(*) FROM sched_slots').pluck().get()).toBe(0)
    db.close()
  })

  it('read the same from the built command (its thread runs the compiled module)', async () => {
    const env = { SVC_DB: join(dir, 'cli', 'svc.db'), SVC_FAKE_NOW: new Date(FROM).toISOString() }
    await runCliJson(['publishers', 'add', 'big', '--manifest', writeFeed(join(dir, 'feed-cli'))], env)
    const result = await runCli(['import', 'publishers', '--json'], env)
    const [report] = JSON.parse(result.stdout) as { written: number; problems: { line: number }[] }[]
    expect(report?.written).toBe(SLOTS - 1 - REFUSED.size)
    expect(report?.problems.map((problem) => problem.line)).toEqual([...REFUSED.keys()])
  })
})

describe('a sync of several publishers', () => {
  it('checkpoints each one while the next is read: the WAL stays about one publisher long', async () => {
    const db = openDatabase(join(dir, 'several', 'svc.db'))
    for (const slug of ['one', 'two', 'three', 'four'])
      addPublisher(db, { slug, manifestUrl: writeFeed(join(dir, `feed-${slug}`)) })
    const walBytes = () => statSync(join(dir, 'several', 'svc.db-wal')).size
    const reports = await syncPublishers(db, { clock: () => FROM, only: 'one' })
    expect(reports.map((report) => report.outcome)).toEqual(['synced'])
    // One publisher's transaction, checkpointed by SQLite's own automatic checkpoint.
    const onePublisher = walBytes()
    const all = await syncPublishers(db, { clock: () => FROM + 120_000 })
    expect(Object.fromEntries(all.map((report) => [report.publisher, report.outcome]))).toEqual({
      one: 'unchanged',
      two: 'synced',
      three: 'synced',
      four: 'synced',
    })
    // Three more without a checkpoint between them would take three times as much.
    expect(walBytes()).toBeLessThan(onePublisher * 1.5)
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000)
    expect(db.prepare('SELECT count(*) FROM sched_slots').pluck().get()).toBe(4 * (SLOTS - 1 - REFUSED.size))
    db.close()
  })

  it('begin the next while one is written, and keep its claim when that one rolls back', async () => {
    const root = join(dir, 'feeds-rollback')
    // The first publisher's last slot line is cut short: it fails after all its slot files were read, when the
    // next one is already begun (claimed inside its transaction).
    writeFeed(join(root, 'a'), '{"resourceType": "Slot", "id": "cut')
    writeFeed(join(root, 'b'))
    const server = await startFeedServer(root)
    try {
      const db = openDatabase(join(dir, 'rollback', 'svc.db'))
      addPublisher(db, { slug: 'a', manifestUrl: `${server.url}/a/$bulk-publish` })
      addPublisher(db, { slug: 'b', manifestUrl: `${server.url}/b/$bulk-publish` })
      const reports = await syncPublishers(db, { clock: () => FROM })
      expect(reports.map(({ publisher, outcome }) => [publisher, outcome])).toEqual([
        ['a', 'failed'],
        ['b', 'synced'],
      ])
      expect(reports[1]?.written).toBe(SLOTS - 1 - REFUSED.size)
      // Claimed, though the transaction its claim was first written in rolled back.
      expect(fetchRefusal(db, 'b', FROM + 1_000)).toMatch(/fetched less than a minute ago/)
      db.close()
    } finally {
      await server.close()
    }
  })

  it('give back the claim of the next one, begun while one is written, when the run is interrupted', async () => {
    const root = join(dir, 'feeds-interrupted')
    writeFeed(join(root, 'a'))
    writeFeed(join(root, 'b'))
    const server = await startFeedServer(root)
    const interrupt = new AbortController()
    // Interrupted as soon as b is begun, which is while a is written.
    server.onAnswered = (path) => {
      if (path === '/b/$bulk-publish') interrupt.abort()
    }
    try {
      const db = openDatabase(join(dir, 'interrupted', 'svc.db'))
      addPublisher(db, { slug: 'a', manifestUrl: `${server.url}/a/$bulk-publish` })
      addPublisher(db, { slug: 'b', manifestUrl: `${server.url}/b/$bulk-publish` })
      await expect(syncPublishers(db, { clock: () => FROM, signal: interrupt.signal })).rejects.toThrow(
        /interrupted while syncing a/,
      )
      expect(server.requests.map(({ path }) => path)).toContain('/b/$bulk-publish')
      expect(db.prepare("SELECT count(*) FROM sched_slots WHERE id GLOB 'b:*'").pluck().get()).toBe(0)
      // b may be synced again at once: its claim was given back.
      expect(db.prepare("SELECT last_fetch_at FROM publishers WHERE slug = 'b'").pluck().get()).toBeNull()
      expect(fetchRefusal(db, 'b', FROM + 1_000)).toBeUndefined()
      db.close()
    } finally {
      await server.close()
    }
  })

  it('fail one whose reference file breaks off while its slots are read ahead, and leave the thread to the next', async () => {
    const db = openDatabase(join(dir, 'ref-broken', 'svc.db'))
    const broken = join(dir, 'feed-ref-broken')
    addPublisher(db, { slug: 'a-broken', manifestUrl: writeFeed(broken) })
    addPublisher(db, { slug: 'b-whole', manifestUrl: writeFeed(join(dir, 'feed-ref-whole')) })
    // The slot file is read ahead on the thread while the schedules are read; the last one is cut short.
    writeFileSync(join(broken, 'schedules.ndjson'), '{"resourceType": "Schedule", "id": "s0"')
    const reports = await syncPublishers(db, { clock: () => FROM })
    expect(reports[0]).toMatchObject({
      publisher: 'a-broken',
      outcome: 'failed',
      message: expect.stringMatching(/schedules\.ndjson ends in a partial record$/),
    })
    // The next publisher's slots are its own, every one, with its own lines' refusals.
    expect(reports[1]).toMatchObject({
      publisher: 'b-whole',
      outcome: 'synced',
      written: SLOTS - 1 - REFUSED.size,
    })
    expect(reports[1]?.problems.map((problem) => problem.line)).toEqual([...REFUSED.keys()])
    expect(db.prepare("SELECT count(*) FROM sched_slots WHERE id GLOB 'a-broken:*'").pluck().get()).toBe(0)
    db.close()
  })
})

describe('a sync from a server that drops the slot file while the reference files are read', () => {
  it('reads the slot file again from its start and stores every slot once', async () => {
    const feed = join(dir, 'feed-dropped')
    writeFeed(feed)
    const server = await startFeedServer(feed)
    try {
      // The schedules are answered only once the slot file's first answer has broken off.
      server.failures.set('/slots.ndjson', 'truncate-once')
      let dropped!: () => void
      server.holds.set('/schedules.ndjson', new Promise<void>((resolve) => (dropped = resolve)))
      server.onAnswered = (path) => {
        if (path === '/slots.ndjson') dropped()
      }
      const db = openDatabase(join(dir, 'dropped', 'svc.db'))
      addPublisher(db, { slug: 'big', manifestUrl: `${server.url}/$bulk-publish` })
      const report = await syncPublisher(db, 'big', { clock: () => FROM })
      expect(report).toMatchObject({ outcome: 'synced', written: SLOTS - 1 - REFUSED.size })
      expect(report.problems.map((problem) => problem.line)).toEqual([...REFUSED.keys()])
      expect(server.requests.filter(({ path }) => path === '/slots.ndjson')).toHaveLength(2)
      expect(db.prepare('SELECT count(*) FROM sched_slots').pluck().get()).toBe(SLOTS - 1 - REFUSED.size)
      db.close()
    } finally {
      await server.close()
    }
  })
})

describe('the slot parser', () => {
  it('settles batches in line order, file after file, whether the thread or the caller read them', async () => {
    // One group may wait on the thread: with sources read from memory (no turn of the event loop between
    // chunks, so no answer of the thread is seen), every second group is read by the caller while the one
    // before it is still on the thread.
    const parser = new SlotParser('too long', { threadBacklog: 1 })
    const files = ['a', 'b', 'c']
    const lineCount = 12_000
    const refused = (line: number) => line % 1_000 === 777
    const text = (file: string) =>
      moreSlotLines(lineCount, refused).replaceAll('"id":"m', `"id":"${file}`) + '\n'
    const seen: string[] = []
    try {
      await parser.each(
        files,
        (file) => linesIn(text(file)),
        (batch, file) => {
          eachOfBatch(
            batch,
            `${file}:`,
            (slot, line) => seen.push(`${file}:${line}:${slot.id}`),
            (line) => seen.push(`${file}:${line}:refused`),
          )
        },
      )
    } finally {
      await parser.close()
    }
    expect(seen).toEqual(
      files.flatMap((file) =>
        Array.from({ length: lineCount }, (_, index) =>
          refused(index + 1)
            ? `${file}:${index + 1}:refused`
            : `${file}:${index + 1}:${file}:${file}${index + 1}`,
        ),
      ),
    )
  })
})

describe('group claims', () => {
  it('give each group sent to the thread to whichever side claims it first, once', () => {
    const caller = new GroupClaims()
    const thread = new GroupClaims(caller.shared)
    caller.offer(0)
    expect(caller.claim(0)).toBe(true)
    expect(thread.claim(0)).toBe(false)
    caller.offer(1)
    expect(thread.claim(1)).toBe(true)
    expect(caller.claim(1)).toBe(false)
    // A group not sent yet cannot be claimed; group 64 takes group 0's slot once sent.
    expect(thread.claim(64)).toBe(false)
    caller.offer(64)
    expect(thread.claim(0)).toBe(false)
    expect(caller.claim(64)).toBe(true)
  })
})

/** Threads of this process under Linux's idle policy (SCHED_IDLE is 5: field 41 of a thread's stat). */
function idlePolicyThreads(): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38] === '5'
  }).length
}

/** Whether this machine can set the idle policy as svc does (util-linux's chrt, on Linux). */
function idlePolicyAvailable(): boolean {
  try {
    execFileSync('chrt', ['--idle', '0', 'true'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe('the slot parser with its thread on idle CPU', () => {
  it('settles every line in order, whoever read each group', async () => {
    // Read from memory, no answer of the thread is seen before the read ends (see above): each group due is
    // read by the caller unless the thread began it first, and then waited for.
    const idleBefore = idlePolicyThreads()
    const parser = new SlotParser('too long', { idleThread: true })
    const files = ['a', 'b']
    const lineCount = 30_000
    const text = (file: string) =>
      moreSlotLines(lineCount, () => false).replaceAll('"id":"m', `"id":"${file}`) + '\n'
    const seen: string[] = []
    try {
      await parser.each(
        files,
        (file) => linesIn(text(file)),
        (batch, file) =>
          eachOfBatch(
            batch,
            `${file}:`,
            (slot, line) => seen.push(`${file}:${line}:${slot.id}`),
            () => undefined,
          ),
      )
      // The thread put itself, and itself alone, under the idle policy (where the platform has it).
      if (idlePolicyAvailable()) expect(idlePolicyThreads()).toBe(idleBefore + 1)
    } finally {
      await parser.close()
    }
    expect(seen).toEqual(
      files.flatMap((file) =>
        Array.from({ length: lineCount }, (_, index) => `${file}:${index + 1}:${file}:${file}${index + 1}`),
      ),
    )
  })
})

describe('the slot parser before its caller is ready', () => {
  const lineCount = 40_000
  const text = () => moreSlotLines(lineCount, () => false) + '\n'

  it('reads ahead a bounded way, settles nothing, then settles every line in order', async () => {
    const parser = new SlotParser('too long')
    let pulled = 0
    let settledBeforeReady = 0
    let ready = false
    let open!: () => void
    const writing = new Promise<void>((resolve) => (open = resolve))
    const lines: number[] = []
    try {
      const reading = parser.each(
        ['only'],
        () => linesIn(text(), () => pulled++),
        (batch) => {
          if (!ready) settledBeforeReady++
          eachOfBatch(
            batch,
            '',
            (_slot, line) => lines.push(line),
            () => undefined,
          )
        },
        writing,
      )
      // Let the reading run until it waits on the caller.
      for (let turn = 0; turn < 200; turn++) await new Promise((resolve) => setImmediate(resolve))
      const pulledBeforeReady = pulled
      ready = true
      open()
      await reading
      expect(settledBeforeReady).toBe(0)
      // Lines went ahead, but not the whole file (about 14 MB of 64 KiB chunks).
      expect(pulledBeforeReady).toBeGreaterThan(10)
      expect(pulledBeforeReady).toBeLessThan(pulled)
    } finally {
      await parser.close()
    }
    expect(lines).toEqual(Array.from({ length: lineCount }, (_, index) => index + 1))
  })

  it('reads a source that failed while reading ahead again from its start, and fails only when it fails again', async () => {
    const parser = new SlotParser('too long')
    const opened: string[] = []
    let failures = 0
    /** A source whose first opening breaks off after 20 chunks (a dropped connection); `always` breaks each. */
    const source = (name: string, always: boolean) =>
      async function* () {
        const attempt = opened.push(name)
        let chunks = 0
        for await (const lines of linesIn(text())) {
          if (++chunks > 20 && (always || attempt === 1)) {
            failures++
            throw new Error(`${name} broke off`)
          }
          yield lines
        }
      }
    /** Until the source has failed while the caller is not ready yet. */
    const failed = async (count: number) => {
      while (failures < count) await new Promise((resolve) => setImmediate(resolve))
    }
    try {
      let open!: () => void
      const lines: number[] = []
      const reading = parser.each(
        ['dropped once'],
        source('dropped once', false),
        (batch) =>
          eachOfBatch(
            batch,
            '',
            (_slot, line) => lines.push(line),
            () => undefined,
          ),
        new Promise<void>((resolve) => (open = resolve)),
      )
      await failed(1)
      open()
      await reading
      expect(opened).toEqual(['dropped once', 'dropped once'])
      expect(lines).toEqual(Array.from({ length: lineCount }, (_, index) => index + 1))

      opened.length = 0
      let openAgain!: () => void
      const failing = parser.each(
        ['dropped always'],
        source('dropped always', true),
        () => undefined,
        new Promise<void>((resolve) => (openAgain = resolve)),
      )
      await failed(2)
      openAgain()
      await expect(failing).rejects.toThrow('dropped always broke off')
      expect(opened).toEqual(['dropped always', 'dropped always'])
    } finally {
      await parser.close()
    }
  })

  it("stops with the caller's reason, closes the source, and reads the next source whole", async () => {
    const parser = new SlotParser('too long')
    let closed = false
    try {
      const stopped = parser.each(
        ['stopped'],
        async function* () {
          try {
            yield* linesIn(text())
          } finally {
            closed = true
          }
        },
        () => {
          throw new Error('settled a line of a stopped read')
        },
        new Promise((_resolve, reject) =>
          setTimeout(() => reject(new Error('the reference files broke off')), 0),
        ),
      )
      await expect(stopped).rejects.toThrow('the reference files broke off')
      expect(closed).toBe(true)
      const lines: string[] = []
      await parser.each(
        ['next'],
        () => linesIn(text().replaceAll('"id":"m', '"id":"n')),
        (batch) =>
          eachOfBatch(
            batch,
            '',
            (slot) => lines.push(slot.id),
            () => undefined,
          ),
      )
      expect(lines).toEqual(Array.from({ length: lineCount }, (_, index) => `n${index + 1}`))
    } finally {
      await parser.close()
    }
  })
})

describe('slot kinds', () => {
  it('keep apart slots whose schedule and appointment type differ only in where a NUL falls', () => {
    const slot = (schedule: string, appointmentType: string) =>
      JSON.stringify({
        resourceType: 'Slot',
        id: `x${schedule.length}`,
        schedule: { reference: `Schedule/${schedule}` },
        status: 'free',
        start: '2026-12-01T10:00:00Z',
        end: '2026-12-01T10:30:00Z',
        appointmentType: { text: appointmentType },
      })
    const lines = [slot('a\u0000', 'y'), slot('a', '\u0000y')]
    const data = Buffer.from(lines.join('\n'))
    const first = Buffer.byteLength(lines[0] as string)
    const batch = readSlotLines({ first: 1, data, bounds: [0, first, first + 1, data.length] }, 'too long')
    expect(batch.kinds.map(({ scheduleId, appointmentType }) => [scheduleId, appointmentType])).toEqual([
      ['a\u0000', 'y'],
      ['a', '\u0000y'],
    ])
    expect([...batch.kindOf]).toEqual([0, 1])
  })
})

/** The lines of `text` as a stream gives them, in chunks of 64 KiB (`eachChunk` told of each as it is read). */
const linesIn = (text: string, eachChunk = () => {}) =>
  linesOf(Readable.from(counted(chunked(Buffer.from(text), 64 * 1024), eachChunk)))

function* counted<T>(items: Iterable<T>, each: () => void): Generator<T> {
  for (const item of items) {
    each()
    yield item
  }
}

function* chunked(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}
