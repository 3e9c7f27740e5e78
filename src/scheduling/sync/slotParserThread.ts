import { parentPort, workerData } from 'node:worker_threads'
import type { Lines } from '../../ingest/lines.js'
import { readSlotLines } from './slotLines.js'

/** The slot parser's thread (slotParser.ts): lines in, slots out, in the order they came. */
const { oversized } = workerData as { oversized: string }

parentPort?.on('message', (lines: Lines & { data: Uint8Array }) => {
  const data = Buffer.from(lines.data.buffer, lines.data.byteOffset, lines.data.length)
  const batch = readSlotLines({ ...lines, data }, oversized)
  const moved = [
    batch.lines.buffer,
    batch.kindOf.buffer,
    batch.numbers.buffer,
    batch.lengths.buffer,
  ] as ArrayBuffer[]
  parentPort?.postMessage(batch, moved)
})
