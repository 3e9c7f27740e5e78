import { z } from 'zod'
import type { AppContext } from '../api/domain.js'
import { defineEndpoint, type Endpoint, type EndpointRequest } from '../api/endpoint.js'
import { param, type ParamShape, required } from '../api/params.js'
import type { Ports } from '../api/ports.js'
import { BATCH_MAX_BYTES } from '../fhir/batch.js'
import { CursorCodec } from '../fhir/cursor.js'
import { NETWORK_LISTINGS, type PlanIdentifier } from '../fhir/networkListings.js'
import { readEndpoint, searchEndpoint, type StoreEndpointsContext } from '../fhir/store/endpoints.js'
import { ReleaseReader } from '../fhir/store/reader.js'
import { LocalSearch } from '../fhir/store/search.js'
import { ID_PATTERN } from '../fhir/id.js'
import { resourceOf } from '../fhir/store/stored.js'
import { ApiError, FHIR_BASE } from '../http/errors.js'
import { PLANS_LAYOUT, PLANS_STORE } from './declaration.js'

type Resource = Record<string, unknown>

/** NPIs one `$in-network` call may ask about. */
export const MAX_IN_NETWORK_NPIS = 100

const NPI = /^\d{10}$/
const NPI_MESSAGE = 'must be a ten-digit NPI'

const plansChanged = () =>
  new ApiError(410, {
    detail:
      'The plans changed since this search began (a plan release was imported): the cursor cannot go on; start the search again.',
    fhirCode: 'expired',
  })

export interface Plans extends StoreEndpointsContext {
  ports: Ports
}

/** One app's plans: its imported releases as a search source, its cursors, and the ports it asks. */
export function createPlans({ db, clock, ports }: AppContext): Plans {
  return {
    tag: 'plans',
    source: new LocalSearch(new ReleaseReader(db, PLANS_LAYOUT), PLANS_STORE.types, plansChanged),
    cursors: new CursorCodec(db, clock, 'local'),
    pagingNote:
      '`total` on every page. A cursor made before a plan release was imported answers 410 (code expired): the plans changed, start again.',
    ports,
  }
}

const UPSTREAM_ERRORS = {
  410: { description: 'The plans changed since the search began; start it again' },
  502: { description: 'The remote directory refused, failed or answered unreadably ($in-network)' },
  503: { description: 'No directory is served here (not-supported), or it is rate limiting (throttled)' },
  504: { description: 'The remote directory did not answer in time' },
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

/** The identifiers a plan is known by in the directory, and the ids of the networks it names. */
function bridgeOf(plan: Resource): { plans: PlanIdentifier[]; networks: string[] } {
  const plans = asArray(plan.identifier).flatMap((identifier) => {
    const { system, value } = identifier as { system?: unknown; value?: unknown }
    return typeof value === 'string' ? [{ ...(typeof system === 'string' ? { system } : {}), value }] : []
  })
  const networks = asArray(plan.network).flatMap((network) => {
    const value = (network as { identifier?: { value?: unknown } }).identifier?.value
    return typeof value === 'string' ? [value] : []
  })
  return { plans, networks }
}

/**
 * `$in-network`: for each NPI asked, in order, whether the provider directory lists it in one of the plan's
 * networks, and which PractitionerRoles and OrganizationAffiliations do. Never "out of network": network
 * data is sparse (spec, OrganizationAffiliation).
 */
function inNetwork(plans: Plans) {
  return async (request: EndpointRequest<ParamShape>): Promise<{ body: Resource }> => {
    const id = request.pathParams.id as string
    const found = await plans.source.read('InsurancePlan', id, request.signal)
    if (!found) throw new ApiError(404, { detail: `No InsurancePlan/${id} is held here.` })
    const listings = plans.ports.find(NETWORK_LISTINGS)
    if (!listings)
      throw new ApiError(503, {
        detail: 'This deployment serves no provider directory, so no network listing can be looked up.',
        fhirCode: 'not-supported',
      })
    const npis = request.params.npi as string[]
    const networks = await listings.networksOf(bridgeOf(resourceOf(found)), request.signal)
    const listed = await listings.listings(npis, networks, request.signal)
    return {
      body: {
        resourceType: 'Parameters',
        parameter: npis.map((npi, index) => {
          const by = listed[index] ?? []
          return {
            name: 'result',
            part: [
              { name: 'npi', valueString: npi },
              { name: 'status', valueCode: by.length > 0 ? 'listed' : 'not-listed' },
              ...by.map((listing) => ({ name: 'listedBy', valueReference: listing })),
            ],
          }
        }),
      },
    }
  }
}

const IN_NETWORK_DESCRIPTION =
  "Whether the provider directory lists each NPI in one of the plan's networks (the directory's InsurancePlans with the plan's identifiers, and networks with its network ids): one `result` per NPI asked, in order, with parts `npi`, `status` (`listed` or `not-listed`, never out of network: network data is sparse) and a `listedBy` reference per PractitionerRole or OrganizationAffiliation that lists it. Answered from the directory, local or remote (upstream rules apply)."

export function plansEndpoints(plans: Plans): Endpoint[] {
  const [search] = PLANS_STORE.types
  const path = `${FHIR_BASE}/InsurancePlan/:id/$in-network`
  const pathParams = { id: param.string('InsurancePlan id', { max: 64, pattern: ID_PATTERN }) }
  const shared = {
    path,
    tag: 'plans',
    summary: "Whether the provider directory lists providers in a plan's networks",
    description: IN_NETWORK_DESCRIPTION,
    pathParams,
    fhir: {
      resource: 'InsurancePlan',
      operation: {
        name: 'in-network',
        definition: 'urn:svc:fhir:OperationDefinition:InsurancePlan-in-network',
      },
    },
    waits: 'call' as const,
    responses: {
      200: { description: 'Parameters: one result per NPI', schema: { type: 'object' } },
      404: { description: 'No such plan' },
      ...UPSTREAM_ERRORS,
    },
    handler: inNetwork(plans),
  }
  return [
    searchEndpoint(
      plans,
      'InsurancePlan',
      search?.search as NonNullable<(typeof PLANS_STORE.types)[number]['search']>,
      'Medicare Advantage and ACA Marketplace plans by identifier, name, state, county, type, plan year or issuer',
    ),
    readEndpoint(
      plans,
      'InsurancePlan',
      'Read a plan: what it covers and what a member pays, and the release it was read from',
    ),
    defineEndpoint({
      ...shared,
      method: 'GET',
      params: {
        npi: required(
          param.list(MAX_IN_NETWORK_NPIS, `Comma-separated ten-digit NPIs, at most ${MAX_IN_NETWORK_NPIS}.`, {
            pattern: NPI,
            message: NPI_MESSAGE,
          }),
        ),
      },
    }),
    defineEndpoint({
      ...shared,
      method: 'POST',
      body: {
        maxBytes: BATCH_MAX_BYTES,
        parameters: true,
        description: `A Parameters resource with one \`npi\` (valueString) per NPI, at most ${MAX_IN_NETWORK_NPIS}.`,
      },
      params: {
        npi: required(
          param.repeatable(
            z.string().regex(NPI, NPI_MESSAGE),
            `One ten-digit NPI per parameter, at most ${MAX_IN_NETWORK_NPIS}.`,
            MAX_IN_NETWORK_NPIS,
          ),
        ),
      },
    }),
  ]
}
