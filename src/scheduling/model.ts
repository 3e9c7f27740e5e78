/** What scheduling serves, as the API shapes it: shared by the sync that writes it and the search that reads it. */

export interface Coding {
  system?: string
  code: string
  display?: string
}

export interface Identifier {
  system?: string
  value: string
}

export interface LocationSummary {
  id: string
  identifier: Identifier[]
  name?: string
  phone: string[]
  website: string[]
  addressLine: string[]
  city?: string
  state?: string
  postalCode?: string
  physicalType?: { system?: string; code: string }
}

export type ProviderType = 'practitioner' | 'practitioner-role' | 'healthcare-service'

export interface ProviderSummary {
  id: string
  identifier: Identifier[]
  type: ProviderType
  name?: string
  specialty?: string
  specialties: Coding[]
  npi?: string
}

export const ACCEPTING_PATIENTS = ['newpt', 'existptonly', 'existptfam', 'nopt'] as const
export type AcceptingPatients = (typeof ACCEPTING_PATIENTS)[number]

/**
 * What a slot's stored id begins with, its publisher's slug and a colon: slots that start together are in
 * the order of their ids, so publisher by publisher in the order of these prefixes.
 */
export function slotIdPrefix(publisher: string): string {
  return `${publisher}:`
}

export const SLOT_STATUSES = ['free', 'busy', 'busy-unavailable', 'busy-tentative'] as const
export type SlotStatus = (typeof SLOT_STATUSES)[number]
