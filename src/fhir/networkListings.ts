import { definePort } from '../api/ports.js'

/** A directory resource that lists a provider in a network: `PractitionerRole/<id>` or `OrganizationAffiliation/<id>`. */
export interface Listing {
  reference: string
  display?: string
}

/** An identifier as a plan carries it; without a system, any system's value matches. */
export interface PlanIdentifier {
  system?: string
  value: string
}

/**
 * What the provider directory says about insurance networks, asked by other domains (a plan's `$in-network`).
 * Answers come from wherever the directory does (its imported release or a remote directory), under the
 * same upstream rules: a failure is an ApiError (502, 503, 504), never an empty answer. Network data is
 * sparse: a provider no listing names is not thereby outside the network.
 */
export interface NetworkListings {
  /**
   * The directory's network Organizations (ids) for one plan: the `network`s of the directory's
   * InsurancePlans carrying one of `plans`, and the Organizations carrying one of `networks` as identifier.
   */
  networksOf(
    query: { plans: readonly PlanIdentifier[]; networks: readonly string[] },
    signal: AbortSignal,
  ): Promise<string[]>
  /** For each NPI, in order: the PractitionerRoles and OrganizationAffiliations listing it in one of `networks`. */
  listings(npis: readonly string[], networks: readonly string[], signal: AbortSignal): Promise<Listing[][]>
}

export const NETWORK_LISTINGS = definePort<NetworkListings>('network-listings')
