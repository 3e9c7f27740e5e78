import { referencedId } from '../fhir/store/derive.js'
import type { SearchSource, SearchValues } from '../fhir/store/search.js'
import { idOf, resourceOf, type SourcedResource } from '../fhir/store/stored.js'
import type { RefValue, TokenValue } from '../fhir/store/searchParams.js'
import type { Listing, NetworkListings, PlanIdentifier } from '../fhir/networkListings.js'
import { ApiError } from '../http/errors.js'
import { CALL_CONCURRENCY, mapLimited } from '../upstream/limited.js'

type Resource = Record<string, unknown>

/** Plan-Net's extension naming the network a PractitionerRole is part of. */
const NETWORK_REFERENCE = 'http://hl7.org/fhir/us/davinci-pdex-plan-net/StructureDefinition/network-reference'

/** Pages followed for one question: a provider with more than this many roles is not a directory we know. */
const MAX_PAGES = 10
const PAGE = 100

const asArray = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value]

const idsOf = (resources: readonly SourcedResource[]) => resources.map(idOf)

/** The networks (Organization ids) a PractitionerRole is listed in: Plan-Net's network-reference extensions. */
function roleNetworks(role: Resource): string[] {
  return asArray(role.extension).flatMap((extension) => {
    const { url, valueReference } = (extension ?? {}) as { url?: unknown; valueReference?: unknown }
    const id = url === NETWORK_REFERENCE ? referencedId(valueReference, 'Organization') : undefined
    return id === undefined ? [] : [id]
  })
}

const affiliationNetworks = (affiliation: Resource) =>
  asArray(affiliation.network).flatMap((network) => referencedId(network, 'Organization') ?? [])

function listingOf(resource: Resource): Listing {
  const display = (resource.practitioner ?? resource.participatingOrganization) as
    { display?: unknown } | undefined
  return {
    reference: `${String(resource.resourceType)}/${String(resource.id)}`,
    ...(typeof display?.display === 'string' ? { display: display.display } : {}),
  }
}

/**
 * The directory's answer to network questions, asked of its search source as any search is (the imported
 * release, or the remote directory under the upstream rules), one provider's searches at a time per lane.
 */
export function networkListings(source: SearchSource, imported: () => boolean): NetworkListings {
  const all = async (type: string, values: SearchValues, signal: AbortSignal): Promise<SourcedResource[]> => {
    const found: SourcedResource[] = []
    // Every page is read: no count is needed (locally it costs as much as the page).
    let page = await source.search(type, { values: { ...values, _count: PAGE } }, signal, { total: false })
    for (let pages = 1; ; pages++) {
      found.push(...page.matches)
      if (page.next === undefined || pages === MAX_PAGES) return found
      page = await source.search(type, { state: page.next }, signal, { total: false })
    }
  }
  const ready = () => {
    if (!imported())
      throw new ApiError(503, {
        detail: 'No provider directory is imported here, so no network listing can be looked up.',
        fhirCode: 'not-supported',
      })
  }
  const token = (identifier: PlanIdentifier): TokenValue =>
    identifier.system === undefined
      ? { code: identifier.value }
      : { system: identifier.system, code: identifier.value }
  const ref = (id: string): RefValue => ({ id })

  return {
    async networksOf({ plans, networks }, signal) {
      ready()
      const lists = await mapLimited(
        [
          ...plans.map((plan) => () => all('InsurancePlan', { identifier: token(plan) }, signal)),
          ...networks.map((network) => () => all('Organization', { identifier: { code: network } }, signal)),
        ],
        CALL_CONCURRENCY,
        (ask) => ask(),
      )
      const found = new Set<string>()
      lists.slice(0, plans.length).forEach((insurancePlans) => {
        for (const plan of insurancePlans.map(resourceOf))
          for (const network of asArray(plan.network)) {
            const id = referencedId(network, 'Organization')
            if (id !== undefined) found.add(id)
          }
      })
      for (const organizations of lists.slice(plans.length))
        for (const id of idsOf(organizations)) found.add(id)
      return [...found]
    },

    async listings(npis, networks, signal) {
      ready()
      const wanted = new Set(networks)
      if (wanted.size === 0) return npis.map(() => [])
      return mapLimited(npis, CALL_CONCURRENCY, async (npi) => {
        const practitioners = await all('Practitioner', { identifier: npi }, signal)
        // An NPI names a person (type 1) or an organization (type 2), never both: a practitioner found
        // spares the organization search.
        const organizations =
          practitioners.length > 0 ? [] : await all('Organization', { identifier: { code: npi } }, signal)
        const listings: Listing[] = []
        for (const id of idsOf(practitioners)) {
          for (const role of (await all('PractitionerRole', { practitioner: ref(id) }, signal)).map(
            resourceOf,
          ))
            if (roleNetworks(role).some((network) => wanted.has(network))) listings.push(listingOf(role))
        }
        for (const id of idsOf(organizations)) {
          const affiliations = await all(
            'OrganizationAffiliation',
            { 'participating-organization': ref(id) },
            signal,
          )
          for (const affiliation of affiliations.map(resourceOf))
            if (affiliationNetworks(affiliation).some((network) => wanted.has(network)))
              listings.push(listingOf(affiliation))
        }
        return listings
      })
    },
  }
}
