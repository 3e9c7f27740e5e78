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

/**
 * What loading a file loads: every module its static value imports reach (type imports and `import()`
 * load nothing then), with the packages among them by name.
 */
function loadedBy(file: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set([file])
  const packages = new Set<string>()
  const queue = [file]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const text = readFileSync(next, 'utf8')
    for (const [, specifier] of text.matchAll(/^(?:import|export) (?!type )[^;]*?from '([^']+)'/gms)) {
      if (!specifier?.startsWith('.')) {
        packages.add(specifier?.split('/')[0]?.startsWith('@') ? specifier : (specifier?.split('/')[0] ?? ''))
        continue
      }
      const module = join(next, '..', specifier).replace(/\.js$/, '.ts')
      if (!modules.has(module)) {
        modules.add(module)
        queue.push(module)
      }
    }
  }
  return { modules, packages }
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

  it('starts a command that manages accounts or lists what is held without zod or koa', () => {
    // zod alone took ~70 ms of a ~300 ms start: settings load it only when a value given needs a rule, and
    // the store's tables come from index layouts, not from the search parameters' rules.
    const commands = ['orgs', 'keys', 'operators', 'publishers', 'questionnaires', 'requests'].flatMap(
      (topic) =>
        readdirSync(join(REPOSITORY, 'commands', topic)).map((name) =>
          join(REPOSITORY, 'commands', topic, name),
        ),
    )
    const heavy = commands.flatMap((command) =>
      [...loadedBy(command).packages]
        .filter((name) => name === 'zod' || name === 'koa')
        .map((name) => `${relative(REPOSITORY, command)} -> ${name}`),
    )
    expect(commands.length).toBeGreaterThan(10)
    expect(heavy).toEqual([])
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
