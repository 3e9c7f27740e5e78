import type { KeptText, Precompressed } from '../../http/gzipSplice.js'

type Resource = Record<string, unknown>

/**
 * A resource as a release stores it: its bytes as published, sent as they are and parsed only when
 * something reads inside it (an `_include`, a mark). A plan of a hundred benefits is 50 KB of JSON: parsing
 * and serializing it again would cost more than the whole search. A large one whose release keeps it
 * compressed (`kept`) may come without its bytes, read when first wanted: a caller that takes gzip is
 * answered from the compressed data alone.
 */
export class StoredJson {
  #value: Resource | undefined
  #bytes: Buffer | undefined
  readonly #read: (() => Buffer) | undefined

  constructor(
    readonly type: string,
    readonly id: string,
    bytes: Buffer | (() => Buffer),
    /** Its deflate data, CRC-32 and length kept by the release (large resources: see schema.ts). */
    readonly kept?: Precompressed,
  ) {
    if (Buffer.isBuffer(bytes)) this.#bytes = bytes
    else this.#read = bytes
  }

  get bytes(): Buffer {
    this.#bytes ??= (this.#read as () => Buffer)()
    return this.#bytes
  }

  /** What a SplicedJson answer takes of it: its bytes, or itself when its release keeps it compressed. */
  spliceable(): Buffer | KeptText {
    return this.kept ? (this as KeptText) : this.bytes
  }

  get resource(): Resource {
    this.#value ??= JSON.parse(this.bytes.toString()) as Resource
    return this.#value
  }

  /** Serialized anywhere else (a batch entry's fallback), it is the resource it holds. */
  toJSON(): Resource {
    return this.resource
  }
}

/** A resource from any source: parsed (a remote answer), or as a release stores it. */
export type SourcedResource = Resource | StoredJson

export const resourceOf = (resource: SourcedResource): Resource =>
  resource instanceof StoredJson ? resource.resource : resource

export const typeOf = (resource: SourcedResource): string =>
  resource instanceof StoredJson ? resource.type : String(resource.resourceType)

export const idOf = (resource: SourcedResource): string =>
  resource instanceof StoredJson ? resource.id : String(resource.id)
