import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DOMAINS } from '../src/app/domains.js'

/** The house rules a reader relies on, checked on the source itself so that they stay true. */
const SRC = fileURLToPath(new URL('../src', import.meta.url))
const REPOSITORY = fileURLToPath(new URL('..', import.meta.url))

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : []
  })
}

/** Every module a file imports, as a path under src/ (`scheduling/search/slots`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)'|import\('(\.{1,2}\/[^']+)'\)/g)].map((match) =>
    relative(SRC, join(file, '..', (match[1] ?? match[2]) as string)).replace(/\.js$/, ''),
  )
}

/** Domains that serve requests of their own; accounts and stats are the request path's own parts. */
const SERVICE_DOMAINS = DOMAINS.filter((domain) => domain.serving !== undefined).map((domain) => domain.name)
const SHARED = ['api', 'db', 'fhir', 'geo', 'http', 'ingest', 'upstream', 'cli', 'docs', 'dashboard']

describe('the house', () => {
  it('lists each domain once, by the name of its folder', () => {
    const names = DOMAINS.map((domain) => domain.name)
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(statSync(join(SRC, name, 'index.ts')).isFile()).toBe(true)
  })

  it('keeps shared machinery free of every service domain', () => {
    const crossings: string[] = []
    for (const folder of SHARED) {
      for (const file of sources(join(SRC, folder))) {
        for (const imported of importsOf(file)) {
          const domain = imported.split('/')[0] as string
          if (SERVICE_DOMAINS.includes(domain)) crossings.push(`${relative(SRC, file)} -> ${imported}`)
        }
      }
    }
    // The one exception: `svc serve` runs the publishers sync schedule beside the server.
    expect(crossings).toEqual(['cli/runServer.ts -> scheduling/sync/schedule'])
  })

  it('keeps service domains out of each other', () => {
    const crossings: string[] = []
    for (const domain of SERVICE_DOMAINS) {
      for (const file of sources(join(SRC, domain))) {
        for (const imported of importsOf(file)) {
          const other = imported.split('/')[0] as string
          if (other !== domain && SERVICE_DOMAINS.includes(other))
            crossings.push(`${relative(SRC, file)} -> ${imported}`)
        }
      }
    }
    expect(crossings).toEqual([])
  })

  it('never reads the sibling shared/ folder a user of the repository does not have', () => {
    const offenders = [
      ...sources(SRC),
      ...sources(join(REPOSITORY, 'test')),
      ...sources(join(REPOSITORY, 'bench')),
    ]
      .filter((file) => !file.endsWith('architecture.test.ts'))
      .filter((file) => /\.\.\/shared\//.test(readFileSync(file, 'utf8')))
    expect(offenders.map((file) => relative(REPOSITORY, file))).toEqual([])
    expect(readFileSync(join(REPOSITORY, 'README.md'), 'utf8')).not.toMatch(/\.\.\/shared\//)
  })
})
