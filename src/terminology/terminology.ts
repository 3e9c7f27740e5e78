import type { AppContext } from '../api/domain.js'
import type { Clock } from '../clock.js'
import { settingOf } from '../config.js'
import type { Db } from '../db/open.js'
import { UpstreamSource } from '../upstream/client.js'
import { ConceptLists } from './conceptCache.js'
import { RememberedReleases } from './remembered.js'
import { TERMINOLOGY_SOURCES } from './settings.js'
import { RXNORM_CONCEPTS } from '../fhir/rxnormConcepts.js'
import { heldRxNorm } from './rxnormRelease.js'

/** One app's terminology: the store, the remote sources by the system they answer for, what is remembered. */
export interface Terminology {
  db: Db
  clock: Clock
  baseUrl: string
  /** Remote FHIR terminology servers by the code system URI they answer for. */
  sources: ReadonlyMap<string, UpstreamSource>
  releases: RememberedReleases
  concepts: ConceptLists
}

export function createTerminology({ db, config, clock, upstream, ports }: AppContext): Terminology {
  const terminology: Terminology = {
    db,
    clock,
    baseUrl: config.baseUrl,
    sources: new Map(
      Object.entries(settingOf(config, TERMINOLOGY_SOURCES) ?? {}).map(([system, baseUrl]) => [
        system,
        new UpstreamSource({ baseUrl, name: `The remote terminology source for ${system}`, ...upstream }),
      ]),
    ),
    releases: new RememberedReleases(db),
    concepts: new ConceptLists(db),
  }
  // MedList matches drugs through the imported release (never a remote source: it answers at once).
  ports.provide(RXNORM_CONCEPTS, () => heldRxNorm(terminology))
  return terminology
}
