/** The code systems reconciliation reads, and how it compares what they say. */

export const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm'
export const NDC = 'http://hl7.org/fhir/sid/ndc'

export interface Coding {
  system?: string
  code?: string
  display?: string
}

/**
 * An NDC as 11 digits (5-4-2): the 10-digit forms 4-4-2, 5-3-2 and 5-4-1 get a zero where their short
 * segment is; an 11-digit one is kept. Undefined for anything else.
 */
export function normalizeNdc(code: string): string | undefined {
  const trimmed = code.trim()
  const parts = trimmed.split('-')
  if (parts.length === 3 && parts.every((part) => /^\d+$/.test(part))) {
    const [labeler = '', product = '', pack = ''] = parts
    const shape = `${labeler.length}-${product.length}-${pack.length}`
    if (shape === '4-4-2') return `0${labeler}${product}${pack}`
    if (shape === '5-3-2') return `${labeler}0${product}${pack}`
    if (shape === '5-4-1') return `${labeler}${product}0${pack}`
    if (shape === '5-4-2') return `${labeler}${product}${pack}`
    return undefined
  }
  // Without dashes only the 11-digit form says where its segments are.
  return /^\d{11}$/.test(trimmed) ? trimmed : undefined
}

/** Text as reconciliation compares it: case folded, punctuation dropped, whitespace collapsed. */
export const normalizeText = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/** The keys a medication concept is known by: RxNorm codes, NDCs (11 digits), codes of other systems. */
export interface CodeKeys {
  rxnorm: string[]
  ndc: string[]
  other: string[]
}

export function codeKeys(codings: readonly Coding[]): CodeKeys {
  const keys = { rxnorm: [] as string[], ndc: [] as string[], other: [] as string[] }
  for (const coding of codings) {
    if (typeof coding.code !== 'string' || coding.code === '') continue
    if (coding.system === RXNORM) keys.rxnorm.push(coding.code)
    else if (coding.system === NDC) {
      const ndc = normalizeNdc(coding.code)
      if (ndc) keys.ndc.push(ndc)
    } else keys.other.push(`${coding.system ?? ''}|${coding.code}`)
  }
  return keys
}
