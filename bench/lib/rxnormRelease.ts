import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A drug of the generated release: the clinical drug a bench record may name by a brand or an NDC instead. */
export interface BenchDrug {
  scd: string
  sbd: string
  ndc: string
}

/**
 * Writes an RxNorm release in NLM's RRF layout (RXNCONSO, RXNREL, RXNSAT) around the clinical drugs the bench
 * records name: each SCD gets one branded drug (SBD, a trade name of it), one NDC and one ingredient, so that
 * records coded by brand or by NDC are matched through the release as they would be with NLM's files. Returns
 * the folder (named as NLM names a release) and each SCD's brand and NDC.
 */
export function writeBenchRxNorm(dir: string, drugs: readonly { code: string; name: string }[]) {
  const folder = join(dir, 'RxNorm_full_prescribe_11032025', 'rrf')
  mkdirSync(folder, { recursive: true })
  const conso: string[] = []
  const rel: string[] = []
  const sat: string[] = []
  const byScd = new Map<string, BenchDrug>()
  let atom = 1
  const concept = (rxcui: string, tty: string, name: string) => {
    const aui = `${9_000_000 + atom++}`
    conso.push(
      [
        rxcui,
        'ENG',
        '',
        '',
        '',
        '',
        '',
        aui,
        aui,
        rxcui,
        '',
        'RXNORM',
        tty,
        rxcui,
        name,
        '',
        'N',
        '4096',
        '',
      ].join('|'),
    )
    return aui
  }
  const relate = (from: string, rela: string, inverse: string, to: string) => {
    rel.push(
      [to, '', 'CUI', 'RO', from, '', 'CUI', rela, '', '', 'RXNORM', 'RXNORM', '', '', 'N', '', ''].join('|'),
    )
    rel.push(
      [from, '', 'CUI', 'RO', to, '', 'CUI', inverse, '', '', 'RXNORM', 'RXNORM', '', '', 'N', '', ''].join(
        '|',
      ),
    )
  }
  drugs.forEach(({ code, name }, index) => {
    const sbd = `${80_000_000 + index}`
    const ingredient = `${90_000_000 + index}`
    const ndc = `${10_000_000_000 + index}`.padStart(11, '0')
    const aui = concept(code, 'SCD', name)
    concept(sbd, 'SBD', `${name} [Brand ${index}]`)
    concept(ingredient, 'IN', name.split(' ')[0] ?? name)
    relate(sbd, 'tradename_of', 'has_tradename', code)
    relate(code, 'has_ingredient', 'ingredient_of', ingredient)
    sat.push([code, '', '', aui, 'AUI', code, '', '', 'NDC', 'RXNORM', ndc, 'N', '4096', ''].join('|'))
    byScd.set(code, { scd: code, sbd, ndc })
  })
  writeFileSync(join(folder, 'RXNCONSO.RRF'), `${conso.join('\n')}\n`)
  writeFileSync(join(folder, 'RXNREL.RRF'), `${rel.join('\n')}\n`)
  writeFileSync(join(folder, 'RXNSAT.RRF'), `${sat.join('\n')}\n`)
  return { folder: join(dir, 'RxNorm_full_prescribe_11032025'), drugs: byScd }
}
