import { ApiError, type ParamIssue } from '../http/errors.js'
import {
  type Evidence,
  evidenceOf,
  latestFirst,
  MEDICATION_TYPES,
  type MedicationType,
  type Says,
} from './evidence.js'
import { InputIndex, type InputRecord, referenceOf } from './input.js'
import type { RxNormRelease } from '../fhir/rxnormConcepts.js'

/** One medication of the patient: the records that speak of it and what they decide. */
export interface Item {
  evidence: Evidence[]
  /** The same records, the latest first (undated last, ties in input order). */
  latest: Evidence[]
  /** Its keys (codes, or text when it has none), sorted: what its ids are derived from. */
  keys: string[]
  /** undefined: every record says it was not taken; it gets no MedicationRequest. */
  status?: 'active' | 'stopped' | 'cancelled' | 'on-hold' | 'completed' | 'unknown'
  /** Records that disagree on the status, when they do (the latest decided). */
  conflict?: Evidence[]
}

export interface Notice {
  severity: 'information' | 'warning'
  code: string
  text: string
  paths?: string[]
}

export interface Reconciliation {
  patient: string
  items: Item[]
  notices: Notice[]
  records: number
  /** The RxNorm release medications were matched with, when one is imported. */
  rxnorm?: string
}

const isMedication = (record: InputRecord): record is InputRecord & { type: MedicationType } =>
  (MEDICATION_TYPES as readonly string[]).includes(record.type)

/** The one patient of the input, as a reference; 400 naming the paths of subjects that disagree. */
function patientOf(records: readonly InputRecord[]): string {
  const patients = records.filter((record) => record.type === 'Patient')
  const known = new Map<string, number>()
  patients.forEach((patient, position) => {
    if (patient.fullUrl) known.set(patient.fullUrl, position)
    if (typeof patient.resource.id === 'string') known.set(`Patient/${patient.resource.id}`, position)
  })
  const identity = (reference: string) => {
    const direct = known.get(reference) ?? known.get(reference.replace(/^.*\/(Patient\/[^/]+)$/, '$1'))
    if (direct !== undefined) return `input:${direct}`
    return reference.replace(/^.*\/(Patient\/[^/]+)$/, '$1')
  }
  const seen: { identity: string; path: string; reference: string }[] = patients.map((patient, position) => ({
    identity: `input:${position}`,
    path: patient.path,
    reference:
      typeof patient.resource.id === 'string'
        ? `Patient/${patient.resource.id}`
        : (patient.fullUrl as string),
  }))
  for (const record of records.filter(isMedication)) {
    const reference = referenceOf(record.resource.subject)
    if (reference !== undefined)
      seen.push({ identity: identity(reference), path: `${record.path}.subject`, reference })
  }
  const first = seen[0]
  if (!first)
    throw ApiError.invalid([{ path: ['body'], message: 'names no patient: no Patient and no subject' }])
  const others = seen.filter((entry) => entry.identity !== first.identity)
  if (others.length > 0) {
    const issues: ParamIssue[] = [first, ...others].map((entry) => ({
      path: [entry.path],
      message: 'the records are of more than one patient',
    }))
    throw ApiError.invalid(issues, 'The records are of more than one patient; send one patient at a time.')
  }
  return first.reference
}

/**
 * The clinical drugs (RxNorm SCD or GPCK) each record names, through the release: its RxNorm codes, branded
 * ones by the clinical drug they are a trade name of, and its NDCs by the RxCUIs RxNorm links them to. Two
 * records naming the same clinical drug have the same ingredients, strengths and dose form.
 */
function clinicalDrugs(evidence: readonly Evidence[], rxnorm: RxNormRelease | undefined): string[][] {
  if (!rxnorm) return evidence.map(() => [])
  const byNdc = new Map<string, string[]>()
  return evidence.map(({ keys }) => {
    const drugs = new Set<string>()
    const take = (rxcui: string) => {
      const drug = rxnorm.clinicalDrug(rxcui)
      if (drug) drugs.add(drug)
    }
    for (const code of keys.rxnorm) take(code)
    for (const ndc of keys.ndc) {
      let linked = byNdc.get(ndc)
      if (!linked) byNdc.set(ndc, (linked = rxnorm.byNdc(ndc)))
      for (const code of linked) take(code)
    }
    return [...drugs]
  })
}

interface GroupCodes {
  rx: Set<string>
  ndc: Set<string>
  drug: Set<string>
}

/**
 * Groups records of one medication: same RxNorm code, same NDC, same clinical drug (with an RxNorm release),
 * same code of another system, else same text.
 */
function group(evidence: readonly Evidence[], drugs: readonly string[][]): Evidence[][] {
  const parent = evidence.map((_, index) => index)
  const find = (index: number): number => {
    while (parent[index] !== index) {
      parent[index] = parent[parent[index] as number] as number
      index = parent[index] as number
    }
    return index
  }
  const union = (a: number, b: number) => {
    parent[find(a)] = find(b)
  }
  const byKey = new Map<string, number>()
  evidence.forEach((item, index) => {
    const keys = item.keys
    for (const key of [
      ...keys.rxnorm.map((code) => `rx:${code}`),
      ...keys.ndc.map((code) => `ndc:${code}`),
      ...(drugs[index] as string[]).map((code) => `drug:${code}`),
      ...keys.other.map((code) => `code:${code}`),
    ]) {
      const known = byKey.get(key)
      if (known === undefined) byKey.set(key, index)
      else union(index, known)
    }
  })
  // Text joins groups only where nothing is coded differently in the same system. Each group's codes are
  // gathered once and carried along as groups join.
  const codes = new Map<number, GroupCodes>()
  evidence.forEach((item, index) => {
    const root = find(index)
    const known = codes.get(root) ?? {
      rx: new Set<string>(),
      ndc: new Set<string>(),
      drug: new Set<string>(),
    }
    const keys = item.keys
    for (const code of keys.rxnorm) known.rx.add(code)
    for (const code of keys.ndc) known.ndc.add(code)
    for (const code of drugs[index] as string[]) known.drug.add(code)
    codes.set(root, known)
  })
  const clash = (x: Set<string>, y: Set<string>) =>
    x.size > 0 && y.size > 0 && ![...x].some((code) => y.has(code))
  const byText = new Map<string, number>()
  evidence.forEach((item, index) => {
    const key = item.textKey
    if (key === undefined) return
    const known = byText.get(key)
    if (known === undefined) {
      byText.set(key, index)
      return
    }
    const [here, there] = [find(index), find(known)]
    if (here === there) return
    const a = codes.get(here) as GroupCodes
    const b = codes.get(there) as GroupCodes
    // Records coded as different clinical drugs differ in strength or dose form: text never joins them.
    if (a.drug.size > 0 && b.drug.size > 0 ? clash(a.drug, b.drug) : clash(a.rx, b.rx) || clash(a.ndc, b.ndc))
      return
    union(index, known)
    const root = find(index)
    codes.set(root, {
      rx: new Set([...a.rx, ...b.rx]),
      ndc: new Set([...a.ndc, ...b.ndc]),
      drug: new Set([...a.drug, ...b.drug]),
    })
  })
  const groups = new Map<number, Evidence[]>()
  evidence.forEach((item, index) => {
    const root = find(index)
    const members = groups.get(root)
    if (members) members.push(item)
    else groups.set(root, [item])
  })
  return [...groups.values()]
}

/** Items kept apart that share an ingredient (furosemide tablets and a furosemide injection), one notice each. */
function sharedIngredients(
  items: readonly Item[],
  drugsOf: ReadonlyMap<Evidence, string[]>,
  rxnorm: RxNormRelease,
): Notice[] {
  const byIngredient = new Map<string, { name: string; items: Set<Item> }>()
  for (const item of items) {
    const drugs = new Set(item.evidence.flatMap((evidence) => drugsOf.get(evidence) ?? []))
    for (const drug of drugs)
      for (const ingredient of rxnorm.ingredients(drug)) {
        const known = byIngredient.get(ingredient.code) ?? { name: ingredient.display, items: new Set() }
        known.items.add(item)
        byIngredient.set(ingredient.code, known)
      }
  }
  return [...byIngredient.values()]
    .filter((shared) => shared.items.size > 1)
    .map((shared) => ({
      severity: 'information' as const,
      code: 'informational',
      text: `${shared.items.size} medications share the ingredient ${shared.name}; they differ in strength or dose form and are kept apart`,
      paths: [...shared.items].map((item) => item.evidence[0]?.record.path as string),
    }))
}

const SETS: readonly Says[] = ['active', 'stopped', 'cancelled', 'on-hold', 'completed']

/** Status from the latest dated evidence that sets one; past use alone gives completed. */
function decide(item: Item): void {
  const taken = item.latest.filter((evidence) => !evidence.negative)
  if (taken.length === 0) return
  const setting = taken.filter((evidence) => SETS.includes(evidence.says))
  const latest = setting[0]
  if (latest) {
    item.status = latest.says as Item['status']
    const disagree = setting.filter((evidence) => (evidence.says === 'active') !== (latest.says === 'active'))
    if (disagree.length > 0) item.conflict = [latest, ...disagree]
    return
  }
  item.status = taken.some((evidence) => evidence.says === 'neutral') ? 'completed' : 'unknown'
}

function keysOf(evidence: readonly Evidence[]): string[] {
  const keys = new Set<string>()
  for (const item of evidence) {
    const codes = item.keys
    for (const code of codes.rxnorm) keys.add(`rx:${code}`)
    for (const code of codes.ndc) keys.add(`ndc:${code}`)
    for (const code of codes.other) keys.add(`code:${code}`)
  }
  if (keys.size === 0) for (const item of evidence) if (item.textKey) keys.add(`text:${item.textKey}`)
  return [...keys].sort()
}

/**
 * Reconciles one patient's records as of `now`: medication records grouped into items (rules in
 * README, MedList), each item's status decided, and what the caller should know as notices. Asks
 * `deadline` as it goes whether its time is up: then 504.
 */
export function reconcile(
  records: readonly InputRecord[],
  options: { now: number; deadline: () => boolean; rxnorm?: RxNormRelease },
): Reconciliation {
  const { now, deadline, rxnorm } = options
  const patient = patientOf(records)
  const index = new InputIndex(records)
  const notices: Notice[] = []
  const ignored = new Map<string, number>()
  const evidence: Evidence[] = []
  for (const [position, record] of records.entries()) {
    if (position % 1000 === 0 && deadline())
      throw new ApiError(504, { detail: 'The reconciliation ran past its 20 s.' })
    if (!isMedication(record)) {
      if (record.type !== 'Patient' && record.type !== 'Medication')
        ignored.set(record.type, (ignored.get(record.type) ?? 0) + 1)
      continue
    }
    const found = evidenceOf(record, index, now)
    if (found.unresolved)
      notices.push({
        severity: 'warning',
        code: 'not-found',
        text: 'The medication reference names no resource of the input',
        paths: [found.unresolved],
      })
    if (found.concept.codings.length === 0 && !found.concept.text) {
      notices.push({
        severity: 'warning',
        code: 'incomplete',
        text: 'The record names no medication that could be coded or read; it is left out',
        paths: [record.path],
      })
      continue
    }
    evidence.push(found)
  }
  for (const [type, count] of [...ignored].sort(([a], [b]) => a.localeCompare(b)))
    notices.push({
      severity: 'information',
      code: 'informational',
      text: `${type}: ${count} records ignored`,
    })
  const drugs = clinicalDrugs(evidence, rxnorm)
  const items = group(evidence, drugs).map((members): Item => ({
    evidence: members,
    latest: [...members].sort(latestFirst),
    keys: keysOf(members),
  }))
  if (deadline()) throw new ApiError(504, { detail: 'The reconciliation ran past its 20 s.' })
  for (const item of items) {
    decide(item)
    if (item.status === undefined)
      notices.push({
        severity: 'warning',
        code: 'informational',
        text: 'Every record of this medication says it was not taken (or is in error): no MedicationRequest is made for it',
        paths: item.evidence.map((evidence) => evidence.record.path),
      })
    if (item.conflict)
      notices.push({
        severity: 'warning',
        code: 'conflict',
        text: `The records disagree on whether this medication is current; the latest dated one, ${item.conflict[0]?.record.path}, decides`,
        paths: item.conflict.map((evidence) => evidence.record.path),
      })
  }
  if (rxnorm) {
    const drugsOf = new Map(evidence.map((item, index) => [item, drugs[index] as string[]]))
    notices.push(...sharedIngredients(items, drugsOf, rxnorm))
  }
  return { patient, items, notices, records: records.length, ...(rxnorm ? { rxnorm: rxnorm.version } : {}) }
}
