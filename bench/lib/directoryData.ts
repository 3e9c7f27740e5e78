import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { ImportSource } from '../../src/ingest/sources.js'
import { seededRandom } from './random.js'

/**
 * Deterministic directory releases of any size, shaped like the Plan-Net fixture: each record is a fixture
 * record of its type with a new id, NPI and name, and references into the generated release. Generated as a
 * stream, so a national-size release needs no disk for its input.
 */
export interface DirectoryScale {
  practitioners: number
  roles: number
  organizations: number
  locations: number
  affiliations: number
}

export const NATIONAL: DirectoryScale = {
  practitioners: 2_000_000,
  roles: 3_000_000,
  organizations: 500_000,
  locations: 1_000_000,
  affiliations: 500_000,
}

/** Networks the generated affiliations are listed in (organizations gen-org-0 … gen-org-(NETWORKS-1)). */
export const NETWORKS = 50

const lines = (dir: string, type: string) =>
  readFileSync(join(dir, `${type}.ndjson`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')

export const npiOf = (index: number) => String(1_000_000_000 + index)

export function pools(dir: string) {
  const practitioners = lines(dir, 'Practitioner').map((line) => JSON.parse(line))
  return {
    families: [...new Set(practitioners.map((p) => p.name[0].family as string))],
    givens: [...new Set(practitioners.map((p) => p.name[0].given[0] as string))],
  }
}

function stream(name: string, count: number, make: (index: number) => string): ImportSource {
  return {
    name,
    format: 'ndjson',
    async open() {
      let index = 0
      return new Readable({
        read() {
          const batch: string[] = []
          while (index < count && batch.length < 500) batch.push(make(index++))
          if (batch.length > 0) this.push(`${batch.join('\n')}\n`)
          if (index >= count) this.push(null)
        },
      })
    },
  }
}

/** The generated release as import sources (one per type), from the fixture at `dir`. */
export function generatedRelease(dir: string, scale: DirectoryScale): ImportSource[] {
  const rand = seededRandom(20261121)
  const { families, givens } = pools(dir)
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)] as T

  const practitioners = lines(dir, 'Practitioner').map((line) => {
    const p = JSON.parse(line)
    return {
      line,
      id: p.id as string,
      npi: p.identifier[0].value as string,
      family: p.name[0].family,
      given: p.name[0].given[0],
    }
  })
  const roles = lines(dir, 'PractitionerRole').map((line) => {
    const r = JSON.parse(line)
    return {
      line,
      id: r.id as string,
      practitioner: r.practitioner.reference as string,
      organization: r.organization?.reference as string,
    }
  })
  const organizations = lines(dir, 'Organization').map((line) => ({
    line,
    id: JSON.parse(line).id as string,
  }))
  const locations = lines(dir, 'Location').map((line) => ({ line, id: JSON.parse(line).id as string }))
  const affiliation = JSON.parse(lines(dir, 'OrganizationAffiliation')[0] as string)

  return [
    stream('generated/Practitioner.ndjson', scale.practitioners, (i) => {
      const t = practitioners[i % practitioners.length] as (typeof practitioners)[number]
      return t.line
        .replaceAll(t.id, `gen-practitioner-${i}`)
        .replaceAll(t.npi, npiOf(i))
        .replace(`"family":"${t.family}"`, `"family":"${pick(families)}"`)
        .replace(`"given":["${t.given}"`, `"given":["${pick(givens)}"`)
    }),
    stream('generated/PractitionerRole.ndjson', scale.roles, (i) => {
      const t = roles[i % roles.length] as (typeof roles)[number]
      return t.line
        .replaceAll(t.id, `gen-role-${i}`)
        .replaceAll(t.practitioner, `Practitioner/gen-practitioner-${i % scale.practitioners}`)
        .replaceAll(t.organization, `Organization/gen-org-${Math.floor(rand() * scale.organizations)}`)
    }),
    stream('generated/Organization.ndjson', scale.organizations, (i) => {
      const t = organizations[i % organizations.length] as (typeof organizations)[number]
      return t.line.replaceAll(t.id, `gen-org-${i}`)
    }),
    stream('generated/Location.ndjson', scale.locations, (i) => {
      const t = locations[i % locations.length] as (typeof locations)[number]
      return t.line.replaceAll(t.id, `gen-location-${i}`)
    }),
    stream('generated/OrganizationAffiliation.ndjson', scale.affiliations, (i) => {
      const networks = new Set(
        Array.from({ length: 1 + Math.floor(rand() * 4) }, () => Math.floor(rand() * NETWORKS)),
      )
      return JSON.stringify({
        ...affiliation,
        id: `gen-affiliation-${i}`,
        participatingOrganization: {
          reference: `Organization/gen-org-${NETWORKS + (i % (scale.organizations - NETWORKS))}`,
        },
        network: [...networks].map((n) => ({ reference: `Organization/gen-org-${n}` })),
      })
    }),
  ]
}
