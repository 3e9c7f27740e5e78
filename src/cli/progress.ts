/** One self-overwriting status line on a terminal; silent when the stream is not a TTY (logs, pipes, CI). */
export function progressLine(stream: NodeJS.WriteStream, minIntervalMs = 200) {
  let last = 0
  let shown = false
  return {
    update(text: string) {
      if (!stream.isTTY) return
      const now = Date.now()
      if (now - last < minIntervalMs) return
      last = now
      const width = (stream.columns ?? 80) - 1
      stream.write(`\r${text.slice(0, width).padEnd(width)}`)
      shown = true
    },
    clear() {
      if (!shown) return
      stream.write(`\r${' '.repeat((stream.columns ?? 80) - 1)}\r`)
      shown = false
    },
  }
}
