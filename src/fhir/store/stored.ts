import type { Precompressed } from '../../http/gzipSplice.js'

type Resource = Record<string, unknown>

/**
 * A resource as a release stores it: its bytes as published, sent as they are and parsed only when
 * something reads inside it (an `_include`, a mark). A plan of a hundred benefits is 50 KB of JSON: parsing
 * and serializing it again would cost more than the whole search.
 */
export class StoredJson {
  #value: Resource | undefined

  constructor(
    readonly type: string,
    readonly id: string,
    readonly bytes: Buffer,
    /** Its deflate data and CRC-32 kept by the release (large resources: see schema.ts), for gzip answers. */
    readonly kept?: { deflated: Buffer; crc: number },
  ) {}

  /** Its bytes, with their compressed data when the release keeps it: a piece of a SplicedJson answer. */
  spliceable(): Buffer | Precompressed {
    return this.kept ? { bytes: this.bytes, ...this.kept } : this.bytes
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
