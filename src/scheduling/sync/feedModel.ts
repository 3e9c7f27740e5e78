import { createHash } from 'node:crypto'
import type { AcceptingPatients, Coding, LocationSummary, ProviderSummary } from '../model.js'
import {
  conceptCodings,
  extensionsByName,
  isVirtualLocation,
  NPI_SYSTEMS,
  parseReference,
  readAcceptingPatients,
  readCoding,
  readHealthcareService,
  readLocation,
  readPractitioner,
  readPractitionerRole,
} from './feedResources.js'

/**
 * The reference resources of one publisher's feed (everything but slots), resolved into groups (a provider at
 * a location) and schedules. Held in memory while the slots stream past: its size follows the number of
 * locations and providers, not of slots. Each resource is read into what the slots need as it comes (the
 * files come in REFERENCE_TYPES order, so a Schedule's actors are all known when it is read): a national
 * feed's raw roles and Schedules, held to the end of the reference files, took some 70 MB of a sync's heap.
 */

export interface Group {
  key: string
  location: LocationSummary
  provider?: ProviderSummary
  isVirtual: boolean
  npis: string[]
}

export interface ScheduleModel {
  id: string
  group: Group
  serviceTypes: Coding[]
  specialties: Coding[]
  accepting?: AcceptingPatients
}

/** A PractitionerRole as schedules use it: the provider it is, and where it practises first. */
interface RoleModel {
  provider: ProviderSummary
  locationId?: string
}

type Json = Record<string, unknown>

/** Resource types the service reads before slots; any other type in a manifest is ignored. */
export const REFERENCE_TYPES = [
  'Location',
  'Practitioner',
  'PractitionerRole',
  'HealthcareService',
  'Schedule',
]

export function groupKey(publisher: string, locationId: string, provider: ProviderSummary | undefined) {
  const identity = `${publisher}\u0000${locationId}\u0000${provider ? `${provider.type}/${provider.id}` : ''}`
  return createHash('sha256').update(identity).digest('base64url').slice(0, 22)
}

/**
 * One copy of each distinct list of codings: a national feed's 60,000 schedules and providers name a few
 * dozen service types and specialties, and a list each took some 30 MB of a sync's heap.
 */
class SharedCodings {
  readonly #lists = new Map<string, Coding[]>()

  of(codings: Coding[]): Coding[] {
    const key = JSON.stringify(codings)
    let shared = this.#lists.get(key)
    if (!shared) {
      shared = codings.slice()
      this.#lists.set(key, shared)
    }
    return shared
  }
}

function uniqueCodings(codings: Coding[]): Coding[] {
  const seen = new Set<string>()
  return codings.filter((coding) => {
    const token = `${coding.system ?? ''}|${coding.code}`
    if (seen.has(token)) return false
    seen.add(token)
    return true
  })
}

export class FeedModel {
  readonly #locations = new Map<string, LocationSummary>()
  readonly #practitioners = new Map<string, ProviderSummary>()
  readonly #roles = new Map<string, RoleModel>()
  readonly #services = new Map<string, ProviderSummary>()
  readonly groups = new Map<string, Group>()
  readonly schedules = new Map<string, ScheduleModel>()
  readonly #codings = new SharedCodings()

  constructor(readonly publisher: string) {}

  /** Takes one parsed resource of a reference file; returns a problem when the record cannot be used. */
  add(resource: Json, expectedType: string): string | undefined {
    if (resource.resourceType !== expectedType) {
      return `expected a ${expectedType}, found ${String(resource.resourceType ?? 'no resourceType')}`
    }
    const id = typeof resource.id === 'string' && resource.id ? resource.id : undefined
    if (!id) return `${expectedType} has no id`
    switch (expectedType) {
      case 'Location':
        this.#locations.set(id, readLocation(resource, id))
        break
      case 'Practitioner':
        this.#practitioners.set(id, readPractitioner(resource, id))
        break
      case 'PractitionerRole':
        this.#roles.set(id, this.#readRole(resource, id))
        break
      case 'HealthcareService': {
        const service = readHealthcareService(resource, id)
        service.specialties = this.#codings.of(service.specialties)
        this.#services.set(id, service)
        break
      }
      case 'Schedule': {
        const resolved = this.#resolveSchedule(resource)
        if (typeof resolved === 'string') return resolved
        this.schedules.set(resolved.id, resolved)
        break
      }
    }
    return undefined
  }

  /** What a schedule needs of a role; its Practitioner, read before it (REFERENCE_TYPES), lends the name. */
  #readRole(resource: Json, id: string): RoleModel {
    const practitioner = parseReference(resource.practitioner)
    const provider = readPractitionerRole(
      resource,
      id,
      practitioner && this.#practitioners.get(practitioner[1]),
    )
    provider.specialties = this.#codings.of(provider.specialties)
    const location = Array.isArray(resource.location) ? parseReference(resource.location[0]) : undefined
    return { provider, locationId: location?.[1] }
  }

  #provider(type: string, id: string): ProviderSummary | undefined {
    if (type === 'Practitioner') return this.#practitioners.get(id)
    if (type === 'HealthcareService') return this.#services.get(id)
    if (type === 'PractitionerRole') return this.#roles.get(id)?.provider
    return undefined
  }

  #resolveSchedule(resource: Json): ScheduleModel | string {
    const id = resource.id as string
    let locationId: string | undefined
    let provider: ProviderSummary | undefined
    const actors = Array.isArray(resource.actor) ? resource.actor : []
    for (const actor of actors) {
      const reference = parseReference(actor)
      if (!reference) continue
      const [type, actorId] = reference
      if (type === 'Location') locationId ??= actorId
      else if (!provider) {
        provider = this.#provider(type, actorId)
        if (!provider && ['Practitioner', 'PractitionerRole', 'HealthcareService'].includes(type)) {
          return `Schedule ${id} names ${type}/${actorId}, which the feed does not contain`
        }
      }
    }
    // An STU 1 schedule may name only the role; the role then says where it practises.
    if (!locationId && provider?.type === 'practitioner-role') {
      locationId = this.#roles.get(provider.id)?.locationId
    }
    if (!locationId) return `Schedule ${id} has no Location actor`
    const location = this.#locations.get(locationId)
    if (!location) return `Schedule ${id} names Location/${locationId}, which the feed does not contain`

    const key = groupKey(this.publisher, locationId, provider)
    let group = this.groups.get(key)
    if (!group) {
      const npis = (provider?.identifier ?? [])
        .filter((identifier) => identifier.system && NPI_SYSTEMS.has(identifier.system))
        .map((identifier) => identifier.value)
      if (provider?.npi) npis.push(provider.npi)
      group = { key, location, provider, isVirtual: isVirtualLocation(location), npis: [...new Set(npis)] }
      this.groups.set(key, group)
    }
    const extensions = extensionsByName(resource)
    const scheduleSpecialties = [
      ...(extensions.get('schedule-specialty') ?? []),
      ...(extensions.get('specialty') ?? []),
    ]
      .map((extension) => readCoding(extension.valueCoding))
      .filter((coding) => coding !== undefined)
    return {
      id,
      group,
      serviceTypes: this.#codings.of(uniqueCodings(conceptCodings(resource.serviceType))),
      specialties: this.#codings.of(
        uniqueCodings([...(provider?.specialties ?? []), ...scheduleSpecialties]),
      ),
      accepting: readAcceptingPatients(extensions),
    }
  }
}
