import { definePort } from '../api/ports.js'

/** A concept of RxNorm as another domain needs it: its code and its name. */
export interface DrugConcept {
  code: string
  display: string
}

/**
 * What an imported RxNorm release says about drug codes, asked by other domains (MedList's matching). Every
 * answer is of the one release held (the one imported last); a code the release does not have gives nothing.
 */
export interface RxNormRelease {
  readonly version: string
  /**
   * The clinical drug (SCD, or GPCK for a pack) a code names: itself, or the one a branded drug (SBD, BPCK)
   * is a trade name of. Undefined for codes that are not drugs (an ingredient, a component) or not held.
   */
  clinicalDrug(rxcui: string): string | undefined
  /** The RxCUIs RxNorm links an NDC (11 digits) to. */
  byNdc(ndc: string): string[]
  /** The ingredients (IN, PIN, MIN) of a drug, through its components. */
  ingredients(rxcui: string): DrugConcept[]
}

/** The RxNorm release held when asked, or undefined when none is imported. */
export type RxNormConcepts = () => RxNormRelease | undefined

export const RXNORM_CONCEPTS = definePort<RxNormConcepts>('rxnorm-concepts')
