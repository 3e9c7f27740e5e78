import type { DelimitedRow } from '../../ingest/delimited.js'
import type { BadRecord, CodeSystemRelease, ConceptRecord } from '../model.js'

export const NUCC_SYSTEM = 'http://nucc.org/provider-taxonomy'

const REQUIRED = ['Code', 'Grouping', 'Classification', 'Specialization', 'Definition', 'Display Name']
const PROPERTIES = [
  { column: 'Grouping', code: 'grouping' },
  { column: 'Classification', code: 'classification' },
  { column: 'Specialization', code: 'specialization' },
  { column: 'Section', code: 'section' },
  { column: 'Notes', code: 'notes' },
]
const TAXONOMY_CODE = /^[0-9]{3}[0-9A-Z]{6}X$/

export class NotNuccError extends Error {}

/**
 * The NUCC Health Care Provider Taxonomy in NUCC's CSV layout. A specialization's parent is its
 * classification's own code (same grouping and classification, no specialization), so `is-a` and
 * `parent`/`child` work on the taxonomy as NUCC draws it.
 */
export async function readNuccCsv(
  rows: AsyncIterable<DelimitedRow>,
  file: string,
  version: string,
): Promise<{ release: CodeSystemRelease; bad: BadRecord[] }> {
  const iterator = rows[Symbol.asyncIterator]()
  const first = await iterator.next()
  const header = first.done ? [] : first.value.fields.map((name) => name.trim())
  const missing = REQUIRED.filter((name) => !header.includes(name))
  if (missing.length > 0)
    throw new NotNuccError(`${file}: not a NUCC taxonomy CSV (no column ${missing.join(', ')})`)
  const column = (record: string[], name: string) => record[header.indexOf(name)]?.trim() ?? ''
  const bad: BadRecord[] = []
  const concepts = new Map<string, ConceptRecord>()
  const classificationCode = new Map<string, string>()
  const pending: { concept: ConceptRecord; key: string }[] = []
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const { fields: record, line } = next.value
    const code = column(record, 'Code')
    if (record.length !== header.length) {
      bad.push({ file, line, message: `expected ${header.length} columns, got ${record.length}` })
      continue
    }
    if (!TAXONOMY_CODE.test(code)) {
      bad.push({ file, line, message: `"${code}" is not a taxonomy code (ten characters ending in X)` })
      continue
    }
    if (concepts.has(code)) {
      bad.push({ file, line, message: `code ${code} appears twice; the first is kept` })
      continue
    }
    const classification = column(record, 'Classification')
    const specialization = column(record, 'Specialization')
    const key = `${column(record, 'Grouping')}\u0000${classification}`
    const display =
      column(record, 'Display Name') ||
      (specialization ? `${classification}, ${specialization}` : classification)
    const concept: ConceptRecord = {
      code,
      display: display || undefined,
      definition: column(record, 'Definition') || undefined,
      status: 'active',
      abstract: false,
      properties: PROPERTIES.filter(
        ({ column: name }) => header.includes(name) && column(record, name) !== '',
      ).map(({ column: name, code: property }) => ({
        property,
        type: 'String',
        value: column(record, name),
      })),
      parents: [],
    }
    concepts.set(code, concept)
    if (specialization === '') classificationCode.set(key, code)
    else pending.push({ concept, key })
  }
  for (const { concept, key } of pending) {
    const parent = classificationCode.get(key)
    if (parent) concept.parents.push(parent)
  }
  return {
    release: {
      url: NUCC_SYSTEM,
      version,
      name: 'NUCCProviderTaxonomy',
      title: 'NUCC Health Care Provider Taxonomy',
      status: 'active',
      content: 'complete',
      properties: PROPERTIES.map(({ code, column: name }) => ({
        code,
        type: 'string',
        description: `NUCC ${name}`,
      })),
      origin: file,
      concepts: [...concepts.values()],
    },
    bad,
  }
}
