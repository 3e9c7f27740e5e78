import { EventEmitter } from 'node:events'

const ESC = '\u001b'
/** An escape sequence: CSI (colours, cursor) or OSC (titles, links), kept whole and taking no cells. */
const SEQUENCE = /\u001b(?:\[[0-9;?<=>]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\))/y
/** Synchronized output (DEC mode 2026): a terminal that knows it shows the whole frame at once. */
const BEGIN_FRAME = `${ESC}[?2026h`
const END_FRAME = `${ESC}[?2026l`

/** A line cut to `columns` cells, its escape sequences kept (a cut line ends with a reset). */
export function cutLine(line: string, columns: number): string {
  let cells = 0
  let at = 0
  let out = ''
  while (at < line.length) {
    SEQUENCE.lastIndex = at
    const sequence = SEQUENCE.exec(line)
    if (sequence) {
      out += sequence[0]
      at = SEQUENCE.lastIndex
      continue
    }
    const character = String.fromCodePoint(line.codePointAt(at) as number)
    if (cells === columns) return `${out}${ESC}[0m`
    out += character
    cells++
    at += character.length
  }
  return out
}

/**
 * What Ink draws on: a stand-in for the terminal that takes each whole frame (Ink in debug mode writes
 * every frame whole) and paints it over the screen, every row placed by its number and cleared first,
 * rows past the frame cleared, nothing past the last row or column written. A frame never depends on what
 * the terminal showed before: no line counting that a wrapped line, a frame taller than the screen or a
 * resize can break (which left old frames' lines on the screen). Resizes come from the real terminal.
 */
export class FrameScreen extends EventEmitter {
  readonly isTTY = true
  #last = ''
  #clear = true

  constructor(private readonly terminal: NodeJS.WriteStream) {
    super()
    terminal.on('resize', this.#resized)
  }

  get columns(): number {
    return this.terminal.columns || 80
  }

  get rows(): number {
    return this.terminal.rows || 24
  }

  /** A frame from Ink: painted unless it is the one already on the screen. */
  write(frame: string): boolean {
    if (frame === this.#last && !this.#clear) return true
    this.#last = frame
    const { columns, rows } = this
    const lines = frame.replace(/\n+$/, '').split('\n').slice(0, rows)
    let out = `${BEGIN_FRAME}${this.#clear ? `${ESC}[2J` : ''}`
    lines.forEach((line, row) => {
      out += `${ESC}[${row + 1};1H${ESC}[2K${cutLine(line, columns)}`
    })
    if (lines.length < rows) out += `${ESC}[${lines.length + 1};1H${ESC}[J`
    this.#clear = false
    return this.terminal.write(`${out}${END_FRAME}`)
  }

  /** Stops following the terminal's size. */
  close(): void {
    this.terminal.off('resize', this.#resized)
  }

  #resized = () => {
    // Whatever the terminal did with the old frame on resizing (reflowed it, cut it), the next one starts clean.
    this.#clear = true
    this.emit('resize')
  }
}
