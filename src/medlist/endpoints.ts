import type { AppContext } from '../api/domain.js'
import { defineEndpoint, type Endpoint } from '../api/endpoint.js'
import type { Clock } from '../clock.js'
import { settingOf } from '../config.js'
import { FHIR_BASE } from '../http/pathBase.js'
import type { Ports } from '../api/ports.js'
import { RXNORM_CONCEPTS } from '../fhir/rxnormConcepts.js'
import { inputRecords } from './input.js'
import { reconciledBundle } from './output.js'
import { reconcile } from './reconcile.js'
import { MEDLIST_ORGANIZATION } from './settings.js'

/** Body of one call (spec, Per-request bounds). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024
/** Running time of one call (spec): past it, 504. */
export const MAX_RUN_MS = 20_000

export interface MedList {
  clock: Clock
  organization: string
  ports: Ports
}

export function createMedList({ config, clock, ports }: AppContext): MedList {
  return {
    clock,
    organization: settingOf(config, MEDLIST_ORGANIZATION) ?? 'svc medication reconciliation',
    ports,
  }
}

export function medListEndpoints(state: MedList): Endpoint[] {
  return [
    defineEndpoint({
      method: 'POST',
      path: `${FHIR_BASE}/Patient/$reconcile-medications`,
      tag: 'medlist',
      summary: "Reconcile one patient's medication records into one US Core medication list",
      description:
        'Body: a Bundle of any type, or a Parameters whose `record` parameters each carry one resource: MedicationRequest, -Statement, -Dispense, -Administration, Medication and the Patient (other types are ignored and counted). Answer: a collection Bundle of US Core MedicationRequests, each followed by its Provenance, then an OperationOutcome. No query parameters; at most 16 MiB and 50,000 records; 20 s. Not inside a batch. Nothing of the body is kept.',
      params: {},
      patientData: true,
      body: {
        maxBytes: MAX_BODY_BYTES,
        description: 'A Bundle or Parameters of one patient’s medication records.',
      },
      fhir: {
        resource: 'Patient',
        operation: {
          name: 'reconcile-medications',
          definition: 'urn:svc:fhir:OperationDefinition:reconcile-medications',
        },
      },
      responses: {
        200: {
          description:
            'Bundle (collection): MedicationRequests with their Provenances, and an OperationOutcome',
        },
        400: {
          description:
            'Not a Bundle or Parameters; records of more than one patient (named by JSON path); more than 50,000 records (too-long)',
        },
        413: { description: 'Body over 16 MiB (too-long)' },
        504: { description: 'Ran past 20 s' },
      },
      handler: (request) => {
        const started = performance.now()
        const now = state.clock()
        const records = inputRecords(request.body)
        const rxnorm = state.ports.find(RXNORM_CONCEPTS)?.()
        const reconciliation = reconcile(records, {
          now,
          rxnorm,
          deadline: () => performance.now() - started > MAX_RUN_MS,
        })
        return { body: reconciledBundle(reconciliation, { organization: state.organization, now }) }
      },
    }),
  ]
}
