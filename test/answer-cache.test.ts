import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../src/app/store.js'
import { DIRECTORY_LAYOUT } from '../src/directory/declaration.js'
import { ReleaseReader } from '../src/fhir/store/reader.js'
import type { StoredJson } from '../src/fhir/store/stored.js'
import { AnswerCache, type PreparedAnswer } from '../src/http/answerCache.js'
import { runCli } from './support/cli.js'
import { startTestServer } from './support/harness.js'

const answer = (text: string): PreparedAnswer => {
  const bytes = Buffer.from(text)
  return { status: 200, headers: {}, bytes, length: bytes.length }
}

describe('AnswerCache', () => {
  it('keeps answers within its room, dropping the least recently used first', () => {
    // Each answer takes 100 bytes with its key: the room holds sixteen.
    const cache = new AnswerCache(1600)
    const keys = Array.from({ length: 16 }, (_, index) => String(index).padStart(2, '0'))
    for (const key of keys) cache.set(key, 1, answer(key.repeat(49)))
    expect(cache.size).toBe(16)
    cache.get('00', 1, 0)
    cache.set('16', 1, answer('16'.repeat(49)))
    expect(cache.size).toBe(16)
    expect(cache.get('01', 1, 0)).toBeUndefined()
    expect(cache.get('00', 1, 0)?.bytes.toString()).toBe('00'.repeat(49))
    expect(cache.get('16', 1, 0)?.bytes.toString()).toBe('16'.repeat(49))
  })

  it('does not keep an answer too large for its share of the room', () => {
    const cache = new AnswerCache(1600)
    cache.set('big', 1, answer('x'.repeat(100)))
    expect(cache.get('big', 1, 0)).toBeUndefined()
    cache.set('small', 1, answer('x'.repeat(90)))
    expect(cache.get('small', 1, 0)).toBeDefined()
  })

  it('forgets everything when the database moves on, and never keeps an answer made before', () => {
    const cache = new AnswerCache(1024)
    cache.set('a', 1, answer('1'))
    expect(cache.get('a', 2, 0)).toBeUndefined()
    cache.set('a', 1, answer('stale'))
    expect(cache.get('a', 2, 0)).toBeUndefined()
  })

  it('keeps through a change of the database an answer its endpoint judges still true, asked when next wanted', () => {
    const cache = new AnswerCache(1000)
    let standing = true
    let asked = 0
    const judged = () => {
      asked++
      return standing
    }
    cache.set('judged', 1, answer('j'), { stillTrue: judged })
    cache.set('unjudged', 1, answer('u'))
    expect(cache.get('judged', 2, 0)?.bytes.toString()).toBe('j')
    expect(cache.get('unjudged', 2, 0)).toBeUndefined()
    expect(asked).toBe(1)
    // Judged once per change: the same generation asks no more.
    cache.get('judged', 2, 0)
    expect(asked).toBe(1)
    standing = false
    expect(cache.get('judged', 3, 0)).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('answers through the moment given, not after', () => {
    const cache = new AnswerCache(1024)
    cache.set('a', 1, answer('1'), { through: 1000 })
    expect(cache.get('a', 1, 1000)).toBeDefined()
    expect(cache.get('a', 1, 1001)).toBeUndefined()
    expect(cache.get('a', 1, 0)).toBeUndefined()
  })
})

describe('gzip of answers', () => {
  it('compresses a kept answer once, and one not kept for its own response only', () => {
    const cache = new AnswerCache(1024 * 1024)
    const kept = answer(JSON.stringify({ slots: 'x'.repeat(2000) }))
    cache.set('kept', 1, kept)
    expect(cache.gzip(kept)).toBe(cache.gzip(kept))
    const other = answer(JSON.stringify({ slots: 'y'.repeat(2000) }))
    const once = cache.gzip(other) as Buffer
    expect(gunzipSync(once)).toEqual(other.bytes)
    expect(cache.gzip(other)).not.toBe(once)
    expect(cache.size).toBe(1)
  })

  it('leaves an answer past 256 KB to the compression middleware', () => {
    expect(new AnswerCache(0).gzip(answer('z'.repeat(300 * 1024)))).toBeUndefined()
  })

  it('sends an answer the cache does not keep gzipped whole, with its length', async () => {
    const server = await startTestServer({ env: { SVC_ANSWER_CACHE_MB: '0' } })
    try {
      const plain = await request(`${server.url}/openapi.json`)
      const expected = await plain.body.text()
      const response = await request(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } })
      expect(response.headers['content-encoding']).toBe('gzip')
      // Compressed on the event loop: the middleware's stream would have sent it chunked, without a length.
      expect(Number(response.headers['content-length'])).toBeGreaterThan(0)
      expect(gunzipSync(Buffer.from(await response.body.arrayBuffer())).toString()).toBe(expected)
    } finally {
      await server.close()
    }
  })

  it('sends a stored resource past 16 KB, and a searchset of them, gzipped whole with its length', async () => {
    const server = await startTestServer({ env: { SVC_ANSWER_CACHE_MB: '0' } })
    try {
      for (const path of [
        '/v1/fhir/r4/Questionnaire/prapare-example',
        '/v1/fhir/r4/Questionnaire?url=http://hl7.org/fhir/us/core/Questionnaire/prapare-example',
      ]) {
        const headers = { authorization: `Bearer ${server.key}` }
        const expected = Buffer.from(
          await (await request(`${server.url}${path}`, { headers })).body.arrayBuffer(),
        )
        expect(expected.length).toBeGreaterThan(16 * 1024)
        const response = await request(`${server.url}${path}`, {
          headers: { ...headers, 'accept-encoding': 'gzip' },
        })
        expect(response.headers['content-encoding']).toBe('gzip')
        expect(Number(response.headers['content-length'])).toBeGreaterThan(0)
        expect(gunzipSync(Buffer.from(await response.body.arrayBuffer())).equals(expected)).toBe(true)
      }
    } finally {
      await server.close()
    }
  })
})

describe('resources kept compressed by their release', () => {
  /** A directory release of one Organization past 16 KB and one small, imported by the CLI into the server's store. */
  async function storeWithLargeResource() {
    const server = await startTestServer({ env: { SVC_ANSWER_CACHE_MB: '0' } })
    const file = join(server.dir, 'Organization.ndjson')
    const organization = (id: string, aliases: number) => ({
      resourceType: 'Organization',
      id,
      active: true,
      name: `Clinic ${id}`,
      alias: Array.from(
        { length: aliases },
        (_, index) => `${id} site ${index} of the county health network`,
      ),
    })
    writeFileSync(
      file,
      `${JSON.stringify(organization('big', 600))}\n${JSON.stringify(organization('small', 2))}\n`,
    )
    const imported = await runCli(['import', 'directory', file, '--db', server.dbPath])
    expect(imported.code, imported.stderr).toBe(0)
    const release = readdirSync(server.dir).find((name) => /\.directory-\d+\.db$/.test(name)) as string
    const published = Buffer.from(JSON.stringify(organization('big', 600)))
    return { server, releaseFile: join(server.dir, release), published, file }
  }

  const get = async (url: string, key: string, gzip: boolean) => {
    const response = await request(url, {
      headers: { authorization: `Bearer ${key}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) },
    })
    return { headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) }
  }

  it("splices a large resource's kept compressed data into a read's and a search's gzip answer", async () => {
    const { server, releaseFile } = await storeWithLargeResource()
    try {
      const file = new Database(releaseFile, { readonly: true })
      const kept = new Map(
        (file.prepare('SELECT id, gz FROM dir_resource').all() as { id: string; gz: Buffer | null }[]).map(
          (row) => [row.id, row.gz],
        ),
      )
      file.close()
      expect(kept.get('small')).toBeNull()
      const deflated = kept.get('big') as Buffer
      expect(deflated.length).toBeGreaterThan(0)
      for (const path of ['/v1/fhir/r4/Organization/big', '/v1/fhir/r4/Organization?name=clinic']) {
        const plain = await get(`${server.url}${path}`, server.key, false)
        expect(plain.body.length, plain.body.toString()).toBeGreaterThan(16 * 1024)
        const gzipped = await get(`${server.url}${path}`, server.key, true)
        expect(gzipped.headers['content-encoding']).toBe('gzip')
        expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length)
        // The kept data itself is in the answer: spliced, not compressed again.
        expect(gzipped.body.includes(deflated)).toBe(true)
        expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true)
      }
    } finally {
      await server.close()
    }
  })

  it('answers a caller that takes gzip from what is kept compressed, without reading the text', async () => {
    const { server, releaseFile, published } = await storeWithLargeResource()
    try {
      // The text changed (not its length) before anything is served: only a caller that reads it sees that.
      const file = new Database(releaseFile)
      file.prepare("UPDATE dir_resource SET json = replace(json, 'site', 'SITE') WHERE id = 'big'").run()
      file.close()
      for (const path of ['/v1/fhir/r4/Organization/big', '/v1/fhir/r4/Organization?name=clinic&_count=1']) {
        const gzipped = await get(`${server.url}${path}`, server.key, true)
        expect(gzipped.headers['content-encoding']).toBe('gzip')
        expect(gunzipSync(gzipped.body).includes(published)).toBe(true)
        const plain = await get(`${server.url}${path}`, server.key, false)
        expect(plain.body.includes(published)).toBe(false)
      }
    } finally {
      await server.close()
    }
  })

  it("gives a resource's text, read when first wanted, as published even after its release was replaced", async () => {
    const { server, published, file } = await storeWithLargeResource()
    const db = openDatabase(server.dbPath)
    try {
      const reader = new ReleaseReader(db, DIRECTORY_LAYOUT)
      const big = reader.readOne('Organization', 'big', { gzip: true }) as StoredJson
      expect(big.kept?.length).toBe(published.length)
      writeFileSync(file, `${JSON.stringify({ resourceType: 'Organization', id: 'other', name: 'Other' })}\n`)
      const imported = await runCli(['import', 'directory', file, '--db', server.dbPath])
      expect(imported.code, imported.stderr).toBe(0)
      // The reader moves to the new release (its old file let go of) before the text is first wanted.
      expect(reader.readOne('Organization', 'big')).toBeUndefined()
      expect(big.bytes.equals(published)).toBe(true)
    } finally {
      db.close()
      await server.close()
    }
  })

  it('serves a release file made before resources were kept compressed, gzip included', async () => {
    const { server, releaseFile } = await storeWithLargeResource()
    try {
      const file = new Database(releaseFile)
      file.exec('ALTER TABLE dir_resource DROP COLUMN gz_crc; ALTER TABLE dir_resource DROP COLUMN gz')
      file.close()
      const path = `${server.url}/v1/fhir/r4/Organization/big`
      const plain = await get(path, server.key, false)
      expect(JSON.parse(plain.body.toString()).id).toBe('big')
      const gzipped = await get(path, server.key, true)
      expect(gzipped.headers['content-encoding']).toBe('gzip')
      expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true)
    } finally {
      await server.close()
    }
  })
})
