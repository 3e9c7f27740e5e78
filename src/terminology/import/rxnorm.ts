import type { Readable } from 'node:stream'
import { delimitedRows } from '../../ingest/delimited.js'
import type { IngestLimits } from '../../ingest/limits.js'
import type { BadRecord, CodeSystemRelease, ConceptRecord, PropertyValue } from '../model.js'

export const RXNORM_URL = 'http://www.nlm.nih.gov/research/umls/rxnorm'

/** One RRF file of a release: where it is (for reports) and how to read it. */
export interface RrfFile {
  name: string
  open(): Promise<Readable>
}

/** The files of one RxNorm release (the full release or the Current Prescribable Content). */
export interface RxNormFiles {
  /** The folder or zip the files came from, for the code system's origin. */
  origin: string
  conso: RrfFile
  rel?: RrfFile
  sat?: RrfFile
}

/** What a concept's name is taken from, best first: its own term type, then synonyms. */
const NAME_ORDER = [
  'IN',
  'PIN',
  'MIN',
  'SCD',
  'SBD',
  'GPCK',
  'BPCK',
  'SCDC',
  'SBDC',
  'SCDF',
  'SBDF',
  'SCDG',
  'SBDG',
  'BN',
  'DF',
  'DFG',
  'PSN',
  'SY',
  'TMSY',
  'ET',
]
const nameRank = (tty: string) => {
  const rank = NAME_ORDER.indexOf(tty)
  return rank === -1 ? NAME_ORDER.length : rank
}

const BRANDED = new Set(['SBD', 'BPCK', 'SBDC', 'SBDF', 'SBDG', 'BN'])
const INGREDIENTS = new Set(['IN', 'PIN', 'MIN'])
const COMPONENTS = new Set(['SCDC', 'SBDC'])
const DRUGS = new Set(['SCD', 'SBD', 'GPCK', 'BPCK'])

/**
 * The relationships kept, as properties of the concept they start from. RXNREL lists each relationship in
 * both directions (`tradename_of` and `has_tradename`, ...); which concept is which is read from their term
 * types, so the reading does not hang on the file's column order.
 */
const RELATIONS: Record<
  string,
  { property: string; from: (tty: string) => boolean; to: (tty: string) => boolean }
> = {
  tradename_of: { property: 'tradename_of', from: (t) => BRANDED.has(t), to: (t) => !BRANDED.has(t) },
  has_tradename: { property: 'tradename_of', from: (t) => BRANDED.has(t), to: (t) => !BRANDED.has(t) },
  has_ingredient: {
    property: 'has_ingredient',
    from: (t) => !INGREDIENTS.has(t),
    to: (t) => INGREDIENTS.has(t),
  },
  ingredient_of: {
    property: 'has_ingredient',
    from: (t) => !INGREDIENTS.has(t),
    to: (t) => INGREDIENTS.has(t),
  },
  consists_of: { property: 'consists_of', from: (t) => DRUGS.has(t), to: (t) => COMPONENTS.has(t) },
  constitutes: { property: 'consists_of', from: (t) => DRUGS.has(t), to: (t) => COMPONENTS.has(t) },
  has_dose_form: { property: 'has_dose_form', from: (t) => t !== 'DF', to: (t) => t === 'DF' },
  dose_form_of: { property: 'has_dose_form', from: (t) => t !== 'DF', to: (t) => t === 'DF' },
  contains: { property: 'contains', from: (t) => t === 'GPCK' || t === 'BPCK', to: (t) => DRUGS.has(t) },
  contained_in: { property: 'contains', from: (t) => t === 'GPCK' || t === 'BPCK', to: (t) => DRUGS.has(t) },
}

const RXNORM_PROPERTIES = [
  { code: 'TTY', type: 'code', description: 'RxNorm term type of the concept (IN, SCD, SBD, ...)' },
  { code: 'NDC', type: 'string', description: 'An NDC (11 digits) RxNorm links to the concept' },
  {
    code: 'tradename_of',
    type: 'code',
    description: 'The clinical concept a branded one is a trade name of',
  },
  { code: 'has_ingredient', type: 'code', description: 'An ingredient (IN, PIN, MIN)' },
  { code: 'consists_of', type: 'code', description: 'A component (SCDC, SBDC) of a drug' },
  { code: 'has_dose_form', type: 'code', description: 'The dose form (DF)' },
  { code: 'contains', type: 'code', description: 'A drug a pack contains' },
]

interface Concept {
  name: string
  tty: string
  rank: number
  active: boolean
}

/** An RxNorm release as read: its concepts, then its NDCs and relationships as compact columns. */
export interface RxNormRead {
  release: CodeSystemRelease
  bad: BadRecord[]
}

/** Fields per row in each file (RRF rows end with a `|`, which adds one empty field). */
const CONSO_FIELDS = 18
const SAT_FIELDS = 13
const REL_FIELDS = 16

async function* rows(file: RrfFile, limits: IngestLimits, bad: BadRecord[], fields: number) {
  const stream = await file.open()
  for await (const row of delimitedRows(stream, {
    limits,
    delimiter: '|',
    quoted: false,
    encoding: 'utf-8',
    onOversized: (line) => bad.push({ file: file.name, line, message: 'longer than the record limit' }),
  })) {
    if (row.fields.length < fields) {
      bad.push({
        file: file.name,
        line: row.line,
        message: `has ${row.fields.length} fields; an RRF row of this file has ${fields}`,
      })
      continue
    }
    yield row
  }
}

/**
 * Reads RxNorm's own concepts (SAB `RXNORM`) from RXNCONSO, the NDCs RxNorm links to them from RXNSAT, and
 * their drug relationships from RXNREL, into one code system release whose concepts are built as they are
 * written (a full release has hundreds of thousands, with millions of NDCs and relationships).
 */
export async function readRxNorm(
  files: RxNormFiles,
  version: string,
  limits: IngestLimits,
): Promise<RxNormRead> {
  const bad: BadRecord[] = []
  const concepts = new Map<number, Concept>()
  const atoms = new Map<string, number>()
  for await (const { fields, line } of rows(files.conso, limits, bad, CONSO_FIELDS)) {
    if (fields[11] !== 'RXNORM') continue
    const rxcui = Number(fields[0])
    if (!Number.isSafeInteger(rxcui) || rxcui <= 0) {
      bad.push({ file: files.conso.name, line, message: `RXCUI "${fields[0]}" is not a number` })
      continue
    }
    const tty = fields[12] as string
    const name = fields[14] as string
    const active = fields[16] === 'N'
    atoms.set(fields[7] as string, rxcui)
    const rank = nameRank(tty) + (active ? 0 : NAME_ORDER.length + 1)
    const known = concepts.get(rxcui)
    if (!known) concepts.set(rxcui, { name, tty, rank, active })
    else {
      known.active ||= active
      if (rank < known.rank) Object.assign(known, { name, tty, rank })
    }
  }

  // Duplicates (a relationship listed at concept and atom level) are dropped per concept as it is written.
  const properties = new Map<number, PropertyValue[]>()
  const add = (rxcui: number, property: string, type: string, value: string) => {
    const list = properties.get(rxcui)
    const item = { property, type, value }
    if (list) list.push(item)
    else properties.set(rxcui, [item])
  }
  if (files.sat)
    for await (const { fields } of rows(files.sat, limits, bad, SAT_FIELDS)) {
      if (fields[8] !== 'NDC' || fields[9] !== 'RXNORM') continue
      const rxcui = Number(fields[0])
      if (concepts.has(rxcui) && /^\d{11}$/.test(fields[10] as string))
        add(rxcui, 'NDC', 'String', fields[10] as string)
    }
  if (files.rel)
    for await (const { fields } of rows(files.rel, limits, bad, REL_FIELDS)) {
      const relation = RELATIONS[fields[7] as string]
      if (!relation || fields[10] !== 'RXNORM') continue
      const cui = (column: number, aui: number) =>
        fields[column] ? Number(fields[column]) : atoms.get(fields[aui] as string)
      const a = cui(0, 1)
      const b = cui(4, 5)
      const first = a === undefined ? undefined : concepts.get(a)
      const second = b === undefined ? undefined : concepts.get(b)
      if (!first || !second) continue
      if (relation.from(first.tty) && relation.to(second.tty))
        add(a as number, relation.property, 'Code', `${b}`)
      else if (relation.from(second.tty) && relation.to(first.tty))
        add(b as number, relation.property, 'Code', `${a}`)
    }

  const codes = [...concepts.keys()].sort((x, y) => x - y)
  function* conceptRecords(): Generator<ConceptRecord> {
    for (const rxcui of codes) {
      const concept = concepts.get(rxcui) as Concept
      const seen = new Set<string>()
      const own = (properties.get(rxcui) ?? []).filter((item) => {
        const key = `${item.property}|${item.value as string}`
        return seen.has(key) ? false : (seen.add(key), true)
      })
      yield {
        code: `${rxcui}`,
        display: concept.name,
        status: concept.active ? 'active' : 'inactive',
        abstract: false,
        properties: [{ property: 'TTY', type: 'Code', value: concept.tty }, ...own],
        parents: [],
      }
    }
  }
  return {
    release: {
      url: RXNORM_URL,
      version,
      name: 'RxNorm',
      title: 'RxNorm',
      status: 'active',
      content: 'complete',
      properties: RXNORM_PROPERTIES,
      origin: files.origin,
      concepts: { length: codes.length, [Symbol.iterator]: conceptRecords },
    },
    bad,
  }
}

/** The release an RxNorm file set names: its date in the NLM's file names (`..._11032025`), as NLM writes it. */
export function rxnormVersion(names: readonly string[]): string | undefined {
  for (const name of names) {
    const date =
      /(?:^|[_/\\])(?:RxNorm_full(?:_prescribe)?|Readme(?:_full)?(?:_prescribe)?)_(\d{8})(?:\b|_|\.)/i.exec(
        name,
      )
    if (date) return date[1]
  }
  return undefined
}
