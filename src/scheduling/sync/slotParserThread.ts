import { parentPort, workerData } from 'node:worker_threads'
import type { Lines } from '../../ingest/lines.js'
import { idleThisThread } from '../../threadPriority.js'
import { GroupClaims } from './groupClaims.js'
import { readSlotLines } from './slotLines.js'

/** The slot parser's thread (slotParser.ts): lines in, slots out, in the order they came. */
const data = workerData as { oversized: string; idle: boolean; claims: SharedArrayBuffer }
const { oversized } = data
const claims = new GroupClaims(data.claims)
// Where the policy cannot be had, the thread runs as its process does: the caller still reads what is late.
if (data.idle) idleThisThread()

parentPort?.on('message', (lines: Lines & { data: Uint8Array; sequence: number }) => {
  // A group the caller claimed (it was due before this thread began it) is the caller's: null, at once.
  if (!claims.claim(lines.sequence)) {
    parentPort?.postMessage(null)
    return
  }
  const bytes = Buffer.from(lines.data.buffer, lines.data.byteOffset, lines.data.length)
  const batch = readSlotLines({ ...lines, data: bytes }, oversized)
  const moved = [
    batch.lines.buffer,
    batch.kindOf.buffer,
    batch.numbers.buffer,
    batch.lengths.buffer,
  ] as ArrayBuffer[]
  parentPort?.postMessage(batch, moved)
})
