/**
 * The cost strings of the federal plan files, read into amounts, percents and qualifiers. Forms seen across
 * plan years: `$30.00 Copay after deductible`, `$40`, `$1,250.00`, `$2000.00 Copay with deductible`,
 * `$950.00 Copay per Stay with deductible`, `$N Copay per Day`, `20.00% Coinsurance after deductible`,
 * `35.00%`, `No Charge`, `No Charge after deductible`, `Not Applicable`, blank. A string that fits none is
 * kept as text and reported, never guessed.
 */

export type CostKind = 'copay' | 'coinsurance'

export type Cost =
  /** Blank or "Not Applicable": no cost of this kind in this tier. */
  | { kind: 'none' }
  | {
      kind: CostKind
      /** Dollars for a copay, percent for coinsurance; 0 for "No Charge". */
      value: number
      noCharge: boolean
      /** "after deductible", "per day", "per stay": as the file words them, lower case. */
      qualifiers: string[]
    }
  /** A string that fits no known form: kept as it was written. */
  | { kind: 'text'; text: string }

const MONEY = String.raw`\$\s*((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)`
const PERCENT = String.raw`(\d+(?:\.\d+)?)\s*%`
const PER = String.raw`(?:\s+per\s+(day|stay|visit|admission|trip|item|prescription|script))?`
const DEDUCTIBLE = String.raw`(?:\s+(after|before|with|no)\s+deductible)?`

const COPAY = new RegExp(`^${MONEY}(?:\\s+copay)?${PER}${DEDUCTIBLE}${PER}$`, 'i')
const COINSURANCE = new RegExp(`^${PERCENT}(?:\\s+coinsurance)?${DEDUCTIBLE}$`, 'i')
const NO_CHARGE = new RegExp(`^no\\s+charge${DEDUCTIBLE}$`, 'i')

/** "Not Applicable", and the family cells' "per person not applicable" / "per group not applicable". */
const NOT_APPLICABLE = /^(per (person|group) )?not applicable$/i

const number = (text: string) => Number(text.replaceAll(',', ''))

function qualifiersOf(...parts: (string | undefined)[]): string[] {
  const [per, deductible, laterPer] = parts
  return [
    ...(per ? [`per ${per.toLowerCase()}`] : []),
    ...(deductible ? [`${deductible.toLowerCase()} deductible`] : []),
    ...(laterPer ? [`per ${laterPer.toLowerCase()}`] : []),
  ]
}

/** One cost cell; `column` says whether a "No Charge" is a copay or a coinsurance. */
export function parseCost(raw: string, column: CostKind): Cost {
  const text = raw.trim().replace(/\s+/g, ' ')
  if (text === '' || NOT_APPLICABLE.test(text)) return { kind: 'none' }
  const noCharge = NO_CHARGE.exec(text)
  if (noCharge)
    return { kind: column, value: 0, noCharge: true, qualifiers: qualifiersOf(undefined, noCharge[1]) }
  const copay = COPAY.exec(text)
  if (copay)
    return {
      kind: 'copay',
      value: number(copay[1] as string),
      noCharge: false,
      qualifiers: qualifiersOf(copay[2], copay[3], copay[4]),
    }
  const coinsurance = COINSURANCE.exec(text)
  if (coinsurance)
    return {
      kind: 'coinsurance',
      value: number(coinsurance[1] as string),
      noCharge: false,
      qualifiers: qualifiersOf(undefined, coinsurance[2]),
    }
  return { kind: 'text', text }
}

/**
 * A money cell of a plan's general costs: `$9,200`, `$9,100 ` (sic), `$18400 per group`, `$9200 per person`,
 * `per group not applicable`.
 */
export type Money =
  | { kind: 'none' }
  | { kind: 'money'; value: number; per?: 'person' | 'group' }
  | { kind: 'text'; text: string }

const MONEY_CELL = new RegExp(`^${MONEY}(?:\\s+per\\s+(person|group))?$`, 'i')

export function parseMoney(raw: string): Money {
  const text = raw.trim().replace(/\s+/g, ' ')
  if (text === '' || NOT_APPLICABLE.test(text)) return { kind: 'none' }
  const money = MONEY_CELL.exec(text)
  if (!money) return { kind: 'text', text }
  const per = money[2]?.toLowerCase() as 'person' | 'group' | undefined
  return { kind: 'money', value: number(money[1] as string), ...(per ? { per } : {}) }
}

/** A date as the files write it: ISO `2025-01-01` or US `1/1/2023`; undefined when neither. */
export function parseDate(raw: string): string | undefined {
  const text = raw.trim()
  const iso = /^(\d{4})-(\d{2})-(\d{2})/.exec(text)
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})\b/.exec(text)
  const [year, month, day] = iso ? [iso[1], iso[2], iso[3]] : us ? [us[3], us[1], us[2]] : []
  if (!year || !month || !day) return undefined
  const date = `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`
  return Number.isNaN(Date.parse(`${date}T00:00:00Z`)) ||
    new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date
    ? undefined
    : date
}
