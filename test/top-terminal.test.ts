import { Terminal } from '@xterm/headless'
import { EventEmitter } from 'node:events'
import { spawn as spawnPty, type IPty } from 'node-pty'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FrameScreen } from '../src/tui/screen.js'
import { CLI } from './support/cli.js'
import { bearer, startTestServer, type TestServer } from './support/harness.js'

/**
 * `svc top` as a person sees it: the real command in a pseudo-terminal, its bytes fed to a terminal
 * emulator (xterm's own, headless), and assertions on the emulator's screen, not on Ink's frames.
 */

let t: TestServer
let pty: IPty
let terminal: Terminal
let sent = 0

/** The screen as the emulator holds it: one string per row, trailing blanks cut. */
function screen(): string[] {
  const buffer = terminal.buffer.active
  return Array.from(
    { length: terminal.rows },
    (_, row) => buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '',
  )
}

const count = (lines: string[], pattern: RegExp) => lines.filter((line) => pattern.test(line)).length

/** Waits (polling the emulator, 5 s at most) until the screen shows what `ready` looks for. */
async function until(ready: (lines: string[]) => boolean, what: string): Promise<string[]> {
  const deadline = Date.now() + 5_000
  for (;;) {
    // Let the emulator take what the process wrote before looking.
    await new Promise<void>((resolve) => terminal.write('', resolve))
    const lines = screen()
    if (ready(lines)) return lines
    if (Date.now() > deadline) throw new Error(`screen never showed ${what}:\n${lines.join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function traffic(requests: number): Promise<void> {
  for (let index = 0; index < requests; index++) {
    const path = index % 2 === 0 ? '/v1/scheduling/publishers' : '/v1/fhir/r4/Questionnaire?code=88121-9'
    expect((await t.get(path, bearer(t.key))).status).toBe(200)
    sent++
  }
  await t.server.flush()
}

/** One current frame: the header, the traffic line and each endpoint row once, with the latest count. */
function expectOneFrame(lines: string[]): void {
  expect(count(lines, /^svc top · /), lines.join('\n')).toBe(1)
  expect(count(lines, /^Traffic /), lines.join('\n')).toBe(1)
  expect(count(lines, /GET \/v1\/scheduling\/publishers/), lines.join('\n')).toBeLessThanOrEqual(1)
  expect(count(lines, /GET \/v1\/fhir\/r4\/Questionnaire/), lines.join('\n')).toBeLessThanOrEqual(1)
}

function resize(columns: number, rows: number): void {
  pty.resize(columns, rows)
  terminal.resize(columns, rows)
}

beforeAll(async () => {
  t = await startTestServer({ plan: 'scale' })
  await traffic(6)
  terminal = new Terminal({ cols: 120, rows: 30, allowProposedApi: true })
  pty = spawnPty(process.execPath, [CLI, 'top', '--db', t.dbPath, '--interval', '1'], {
    name: 'xterm-256color',
    cols: 120,
    rows: 30,
    env: {
      PATH: process.env.PATH ?? '',
      TERM: 'xterm-256color',
      SVC_FAKE_NOW: new Date(t.now()).toISOString(),
    },
  })
  pty.onData((data) => terminal.write(data))
}, 60_000)

afterAll(async () => {
  pty?.write('q')
  pty?.kill()
  terminal?.dispose()
  await t.close()
})

describe('svc top on a terminal', () => {
  it('shows exactly one current frame after refreshes', async () => {
    let lines = await until(
      (shown) => shown.some((line) => line.includes(`${sent} in 60s`)),
      `${sent} requests`,
    )
    expectOneFrame(lines)
    for (let refresh = 0; refresh < 3; refresh++) {
      await traffic(3)
      lines = await until(
        (shown) => shown.some((line) => line.includes(`${sent} in 60s`)),
        `${sent} requests`,
      )
      expectOneFrame(lines)
    }
  })

  it('redraws cleanly when the terminal shrinks, grows, and is smaller than the frame', async () => {
    for (const [columns, rows] of [
      [90, 20],
      [140, 42],
      [120, 30],
    ] as const) {
      resize(columns, rows)
      await traffic(1)
      const lines = await until(
        (shown) => shown.some((line) => line.includes(`${sent} in 60s`)),
        `${sent} requests at ${columns}x${rows}`,
      )
      expectOneFrame(lines)
      expect(lines.every((line) => line.length <= columns)).toBe(true)
    }
    // Too small for the traffic line: the header once, every line within the width, then back.
    resize(60, 8)
    const small = await until(
      (shown) => shown[0]?.length === 60 && /UTC/.test(shown[0]),
      'a 60-column header',
    )
    expect(count(small, /^svc top · /)).toBe(1)
    expect(small.every((line) => line.length <= 60)).toBe(true)
    resize(120, 30)
    await traffic(1)
    expectOneFrame(
      await until((shown) => shown.some((line) => line.includes(`${sent} in 60s`)), `${sent} requests`),
    )
  })

  it('paints a frame taller and wider than the terminal as its top-left part, nothing else', async () => {
    const small = new Terminal({ cols: 20, rows: 4, allowProposedApi: true })
    const written: string[] = []
    const tty = Object.assign(new EventEmitter(), {
      columns: 20,
      rows: 4,
      write: (data: string) => written.push(data) > 0,
    }) as unknown as NodeJS.WriteStream
    const frames = new FrameScreen(tty)
    frames.write(['first line', 'second line', 'x'.repeat(50), 'fourth', 'fifth', 'sixth'].join('\n'))
    frames.write(['short', 'two'].join('\n'))
    for (const data of written) await new Promise<void>((resolve) => small.write(data, resolve))
    const buffer = small.buffer.active
    const rows = Array.from({ length: 4 }, (_, row) => buffer.getLine(row)?.translateToString(true))
    expect(rows).toEqual(['short', 'two', '', ''])
    written.length = 0
    frames.write(['first line', 'second line', 'x'.repeat(50), 'fourth', 'fifth'].join('\n'))
    for (const data of written) await new Promise<void>((resolve) => small.write(data, resolve))
    expect(Array.from({ length: 4 }, (_, row) => buffer.getLine(row)?.translateToString(true))).toEqual([
      'first line',
      'second line',
      'x'.repeat(20),
      'fourth',
    ])
    small.dispose()
  })

  it('redraws cleanly on a view change', async () => {
    pty.write('\t')
    const lines = await until(
      (shown) => shown.some((line) => /^ORGANIZATION\s+PLAN\s+MINUTE/.test(line)),
      'the Quota view',
    )
    expect(count(lines, /^svc top · /)).toBe(1)
    expect(count(lines, /^ORGANIZATION\s+PLAN/)).toBe(1)
    // Nothing of the Overview is left beside it.
    expect(count(lines, /^Traffic |^ENDPOINT|GET \/v1\//)).toBe(0)
  })
})
