import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { Decompress } from 'fzstd'

/** fzstd as a stream: the national directory's bulk files are zstd frames, which Node 20's zlib cannot read. */
class ZstdDecoder extends Transform {
  readonly #decoder = new Decompress((data) => {
    // fzstd may hand out views of its window; copy before it is reused.
    this.push(Buffer.from(data))
  })

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.#decoder.push(chunk)
      done()
    } catch (error) {
      done(error as Error)
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.#decoder.push(new Uint8Array(0), true)
      done()
    } catch (error) {
      done(new Error(`truncated zstd stream (${(error as Error).message})`))
    }
  }
}

/** Decompresses by content, not by name: gzip and zstd magic numbers; anything else passes through. */
export async function decoded(raw: Readable): Promise<Readable> {
  const chunks = raw[Symbol.asyncIterator]()
  const first = await chunks.next()
  if (first.done) return Readable.from([])
  const head = first.value as Buffer
  const whole = Readable.from(
    (async function* () {
      yield head
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value as Buffer
    })(),
    { objectMode: false },
  )
  const decoder =
    head.length >= 4 && head[0] === 0x1f && head[1] === 0x8b
      ? createGunzip()
      : head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528
        ? new ZstdDecoder()
        : undefined
  return decoder ? pipeline(whole, decoder, () => undefined) : whole
}
