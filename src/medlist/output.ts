import { createHash, randomUUID } from 'node:crypto'
import { type Coding, NDC, RXNORM } from './codes.js'
import type { Evidence } from './evidence.js'
import { type Resource, recordReference } from './input.js'
import type { Item, Notice, Reconciliation } from './reconcile.js'

const US_CORE_MEDICATION_REQUEST =
  'http://hl7.org/fhir/us/core/StructureDefinition/us-core-medicationrequest|6.1.0'
const US_CORE_PROVENANCE = 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-provenance|6.1.0'

const hash = (text: string) => createHash('sha256').update(text).digest('hex')

/** A UUID made from content: the same input names its entries the same way every time. */
function contentUuid(text: string): string {
  const hex = hash(text)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** Every coding the merged records had, once each: RxNorm first, then NDC, then the others. */
function codingsOf(evidence: readonly Evidence[]): Coding[] {
  const seen = new Map<string, Coding>()
  for (const item of evidence)
    for (const coding of item.concept.codings) {
      const key = `${coding.system ?? ''}|${coding.code ?? ''}`
      if (!seen.has(key)) seen.set(key, coding)
    }
  const rank = (coding: Coding) => (coding.system === RXNORM ? 0 : coding.system === NDC ? 1 : 2)
  return [...seen.values()].sort((a, b) => rank(a) - rank(b))
}

function medicationRequest(item: Item, id: string, patient: string): Resource {
  const ordered = item.latest
  const orders = ordered.filter((evidence) => evidence.type === 'MedicationRequest' && evidence.backsOrder)
  const latestOrder = orders[0]?.record.resource
  const requests = ordered.filter((evidence) => evidence.type === 'MedicationRequest')
  const order = item.evidence.some((evidence) => evidence.backsOrder && !evidence.negative)
  const text = ordered.find((evidence) => evidence.concept.text)?.concept.text
  const dosage = ordered.find((evidence) => (evidence.dosage?.length ?? 0) > 0)?.dosage
  const dispenseRequest = requests.find((evidence) => evidence.record.resource.dispenseRequest !== undefined)
  const category = requests.find((evidence) => Array.isArray(evidence.record.resource.category))
  return {
    resourceType: 'MedicationRequest',
    id,
    meta: { profile: [US_CORE_MEDICATION_REQUEST] },
    status: item.status,
    intent: order ? 'order' : 'plan',
    ...(category ? { category: category.record.resource.category } : {}),
    ...(order ? {} : { reportedBoolean: true }),
    medicationCodeableConcept: { coding: codingsOf(item.evidence), ...(text ? { text } : {}) },
    subject: { reference: patient },
    ...(latestOrder?.encounter ? { encounter: latestOrder.encounter } : {}),
    ...(latestOrder?.authoredOn ? { authoredOn: latestOrder.authoredOn } : {}),
    ...(latestOrder?.requester ? { requester: latestOrder.requester } : {}),
    ...(dosage ? { dosageInstruction: dosage } : {}),
    ...(dispenseRequest ? { dispenseRequest: dispenseRequest.record.resource.dispenseRequest } : {}),
  }
}

const APPLIANCE = '#reconciler'

function provenance(
  item: Item,
  id: string,
  target: string,
  organization: string,
  recorded: string,
): Resource {
  return {
    resourceType: 'Provenance',
    id,
    meta: { profile: [US_CORE_PROVENANCE] },
    contained: [{ resourceType: 'Organization', id: APPLIANCE.slice(1), active: true, name: organization }],
    target: [{ reference: target }],
    recorded,
    agent: [
      {
        type: {
          coding: [
            {
              system: 'http://terminology.hl7.org/CodeSystem/provenance-participant-type',
              code: 'author',
              display: 'Author',
            },
          ],
        },
        who: { reference: APPLIANCE, display: organization },
      },
      {
        type: {
          coding: [
            {
              system: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-provenance-participant-type',
              code: 'transmitter',
              display: 'Transmitter',
            },
          ],
        },
        who: { reference: APPLIANCE, display: organization },
      },
    ],
    entity: item.evidence.map((evidence) => {
      const reference = recordReference(evidence.record)
      return {
        role: 'source',
        what: reference ? { reference } : { display: evidence.record.path },
      }
    }),
  }
}

function outcome(reconciliation: Reconciliation, made: number, notices: readonly Notice[]): Resource {
  return {
    resourceType: 'OperationOutcome',
    issue: [
      {
        severity: 'information',
        code: 'informational',
        diagnostics: `${reconciliation.records} records reconciled into ${made} medications.`,
      },
      {
        severity: 'information',
        code: 'informational',
        diagnostics: reconciliation.rxnorm
          ? `Medications were matched with RxNorm release ${reconciliation.rxnorm}: branded drugs with their clinical drug, NDCs with their RxCUI.`
          : 'No RxNorm release is imported: medications were matched by RxNorm code, NDC and text alone (no SBD to SCD, NDC to RxCUI or ingredient matching).',
      },
      ...notices.map((notice) => ({
        severity: notice.severity,
        code: notice.code,
        diagnostics: notice.text,
        ...(notice.paths ? { expression: notice.paths } : {}),
      })),
    ],
  }
}

/**
 * The answer: per item with a status, its US Core MedicationRequest followed by its one Provenance, then an
 * OperationOutcome. Ids and fullUrls come from the patient and the item's codes; only the Bundle's `id`
 * and `timestamp` and each `Provenance.recorded` change from one call to the next.
 */
export function reconciledBundle(
  reconciliation: Reconciliation,
  options: { organization: string; now: number },
): Resource {
  const recorded = new Date(options.now).toISOString()
  const kept = reconciliation.items
    .filter((item) => item.status !== undefined)
    .map((item) => ({ item, key: `${reconciliation.patient}\n${item.keys.join('\n')}` }))
    .sort((a, b) => a.key.localeCompare(b.key))
  const entry = kept.flatMap(({ item, key }) => {
    const id = `medlist-${hash(key).slice(0, 24)}`
    const fullUrl = `urn:uuid:${contentUuid(key)}`
    return [
      { fullUrl, resource: medicationRequest(item, id, reconciliation.patient) },
      {
        fullUrl: `urn:uuid:${contentUuid(`${key}\nprovenance`)}`,
        resource: provenance(item, `${id}-provenance`, fullUrl, options.organization, recorded),
      },
    ]
  })
  const outcomeKey = `${reconciliation.patient}\n${kept.map(({ key }) => key).join('\n\n')}\noutcome`
  return {
    resourceType: 'Bundle',
    id: randomUUID(),
    type: 'collection',
    timestamp: recorded,
    entry: [
      ...entry,
      {
        fullUrl: `urn:uuid:${contentUuid(outcomeKey)}`,
        resource: outcome(reconciliation, kept.length, reconciliation.notices),
      },
    ],
  }
}
