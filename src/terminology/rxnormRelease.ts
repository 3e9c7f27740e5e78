import type { DrugConcept, RxNormRelease } from '../fhir/rxnormConcepts.js'
import { RXNORM_URL } from './import/rxnorm.js'
import type { Terminology } from './terminology.js'

const CLINICAL = new Set(['SCD', 'GPCK'])
const BRANDED = new Set(['SBD', 'BPCK'])

/**
 * The RxNorm release held, as MedList asks of it; undefined when none is imported. Each view remembers what
 * it read, so one call reads each code once; a new view is asked for per call, so no answer outlives an import.
 */
export function heldRxNorm(terminology: Terminology): RxNormRelease | undefined {
  const system = terminology.releases.codeSystem(RXNORM_URL)
  if (!system) return undefined
  const { db } = terminology
  const values = (code: string, property: string) =>
    (
      db
        .statement(
          'SELECT value FROM term_concept_properties WHERE system_id = ? AND code = ? AND property = ?',
        )
        .pluck()
        .all(system.id, code, property) as string[]
    ).map((value) => JSON.parse(value) as string)
  const clinical = new Map<string, string | undefined>()
  const clinicalDrug = (rxcui: string) => {
    if (!clinical.has(rxcui)) {
      const tty = values(rxcui, 'TTY')[0]
      clinical.set(
        rxcui,
        tty && CLINICAL.has(tty)
          ? rxcui
          : tty && BRANDED.has(tty)
            ? values(rxcui, 'tradename_of').sort()[0]
            : undefined,
      )
    }
    return clinical.get(rxcui)
  }
  const name = (code: string) =>
    (db
      .statement('SELECT display FROM term_concepts WHERE system_id = ? AND code = ?')
      .pluck()
      .get(system.id, code) as string | null | undefined) ?? code
  return {
    version: system.version,
    clinicalDrug,
    byNdc: (ndc) =>
      db
        .statement(
          "SELECT code FROM term_concept_properties WHERE system_id = ? AND property = 'NDC' AND value = ? ORDER BY code",
        )
        .pluck()
        .all(system.id, JSON.stringify(ndc)) as string[],
    ingredients: (rxcui) => {
      const drug = clinicalDrug(rxcui) ?? rxcui
      const codes = new Set(values(drug, 'has_ingredient'))
      for (const component of values(drug, 'consists_of'))
        for (const ingredient of values(component, 'has_ingredient')) codes.add(ingredient)
      return [...codes].sort().map((code): DrugConcept => ({ code, display: name(code) }))
    },
  }
}
