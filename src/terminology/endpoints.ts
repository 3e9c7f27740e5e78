import { z } from 'zod'
import { defineEndpoint, defineOperation, type Endpoint } from '../api/endpoint.js'
import { param, required } from '../api/params.js'
import { FHIR_BASE, type ParamIssue } from '../http/errors.js'
import { BATCH_MAX_BYTES } from '../fhir/batch.js'
import { countiesOf } from './counties.js'
import { expand, MAX_WHOLE_EXPANSION } from './expand.js'
import { lookup } from './lookup.js'
import { releasesUnchanged } from './store.js'
import type { Terminology } from './terminology.js'
import { validateCode } from './validateCode.js'

/** The spec's bound on `property` values of one $lookup, query and body together. */
export const MAX_LOOKUP_PROPERTIES = 100
const TERMINOLOGY_SERVER = 'http://hl7.org/fhir/CapabilityStatement/terminology-server'
const PARAMETERS = { description: 'Parameters', schema: { type: 'object' } }

const missing = (name: string, message: string): ParamIssue => ({ path: [name], message })

/** `coding` replaces `system` + `code`; one form or the other, and a coding names its system. */
function lookupRules(values: { system?: string; code?: string; coding?: { system?: string } }): ParamIssue[] {
  if (values.coding) {
    const issues: ParamIssue[] = []
    for (const name of ['system', 'code'] as const) {
      if (values[name] !== undefined) issues.push(missing(name, `Give either coding or ${name}, not both`))
    }
    if (!values.coding.system) issues.push(missing('coding', 'The coding must name its system'))
    return issues
  }
  const issues: ParamIssue[] = []
  if (values.code === undefined) issues.push(missing('code', 'Parameter "code" is required (or give coding)'))
  if (values.system === undefined)
    issues.push(missing('system', 'Parameter "system" is required (or give coding)'))
  return issues
}

/** Codings one codeableConcept may carry: each may cost a request to an upstream source. */
export const MAX_CONCEPT_CODINGS = 20

function validateRules(values: {
  url?: string
  code?: string
  coding?: { system?: string }
  codeableConcept?: { coding: unknown[] }
}): ParamIssue[] {
  if (values.codeableConcept && values.codeableConcept.coding.length > MAX_CONCEPT_CODINGS) {
    return [
      {
        path: ['codeableConcept'],
        message: `A codeableConcept may carry at most ${MAX_CONCEPT_CODINGS} codings (got ${values.codeableConcept.coding.length})`,
        fhirCode: 'too-long',
      },
    ]
  }
  const given = (['code', 'coding', 'codeableConcept'] as const).filter((name) => values[name] !== undefined)
  if (given.length === 0) return [missing('code', 'Give url and code, or coding, or codeableConcept')]
  if (given.length > 1) return given.map((name) => missing(name, `Give only one of ${given.join(', ')}`))
  if (values.code !== undefined && values.url === undefined) {
    return [missing('url', 'Parameter "url" (the code system) is required with code')]
  }
  if (values.coding && !values.coding.system) return [missing('coding', 'The coding must name its system')]
  return []
}

/** The terminology operations, answering from one app's terminology. */
export function terminologyEndpoints(terminology: Terminology): Endpoint[] {
  // Operations answer from remote sources only where some are configured.
  const waits = terminology.sources.size > 0 ? { waits: 'call' as const } : {}
  return [
    ...defineOperation({
      path: `${FHIR_BASE}/CodeSystem/$lookup`,
      tag: 'terminology',
      summary: 'Look up a code: its display, status and the properties asked for',
      description:
        'From the release held in the store, or from the code system\'s own source. An unknown code is 404 naming "code".',
      params: {
        system: param.string('Code system URI', { max: 4096 }),
        code: param.string('The code to look up', { max: 4096 }),
        version: param.string('Code system release; the latest held when absent', { max: 256 }),
        coding: param.coding('A Coding, in place of system and code (system|code in the URL)'),
        property: param.repeatable(
          z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters long'),
          `A property to return: parent, child, definition, designation, display, inactive or one of the code system's own; repeatable, at most ${MAX_LOOKUP_PROPERTIES} counting URL and body`,
          MAX_LOOKUP_PROPERTIES,
        ),
      },
      rules: lookupRules,
      maxBodyBytes: BATCH_MAX_BYTES,
      ...waits,
      fhir: {
        resource: 'CodeSystem',
        operation: {
          name: 'lookup',
          definition: 'http://hl7.org/fhir/OperationDefinition/CodeSystem-lookup',
        },
        instantiates: TERMINOLOGY_SERVER,
      },
      responses: { 200: PARAMETERS },
      handler: (request) => lookup(terminology, request.params, request.signal),
    }),
    ...defineOperation({
      path: `${FHIR_BASE}/CodeSystem/$validate-code`,
      tag: 'terminology',
      summary: 'Is this code in the code system? Parameters with result, message and display',
      description:
        'An unknown code is result=false with a message. A codeableConcept validates if any coding does.',
      params: {
        url: param.string('Code system URI', { max: 4096 }),
        code: param.string('The code to check', { max: 4096 }),
        version: param.string('Code system release; the latest held when absent', { max: 256 }),
        display: param.string('A display to check against the code', { max: 4096 }),
        coding: param.coding('A Coding, in place of url and code (system|code in the URL)'),
        codeableConcept: param.codeableConcept(
          'A CodeableConcept; valid when any of its codings is (body only)',
        ),
      },
      rules: validateRules,
      maxBodyBytes: BATCH_MAX_BYTES,
      ...waits,
      fhir: {
        resource: 'CodeSystem',
        operation: {
          name: 'validate-code',
          definition: 'http://hl7.org/fhir/OperationDefinition/CodeSystem-validate-code',
        },
        instantiates: TERMINOLOGY_SERVER,
      },
      responses: { 200: PARAMETERS },
      handler: (request) => validateCode(terminology, request.params, request.signal),
    }),
    ...defineOperation({
      path: `${FHIR_BASE}/ValueSet/$expand`,
      tag: 'terminology',
      summary: 'Expand a value set to its codes, with a text filter and paging',
      description:
        'Hosted value sets and implicit ones (<code system>?fhir_vs, ?fhir_vs=isa/<code>, or a code system URI). ' +
        'count=0 gives only the total. An expansion from a remote source comes back whole.',
      params: {
        url: required(param.string('Value set canonical URL', { max: 4096 })),
        filter: param.string('Text: every word must start a word of the display, or start the code', {
          max: 256,
        }),
        count: param.integer(0, MAX_WHOLE_EXPANSION, 'Codes per page; 0 gives only the total'),
        offset: param.integer(0, Number.MAX_SAFE_INTEGER, 'Codes to skip; default 0'),
      },
      maxBodyBytes: BATCH_MAX_BYTES,
      ...waits,
      fhir: {
        resource: 'ValueSet',
        operation: { name: 'expand', definition: 'http://hl7.org/fhir/OperationDefinition/ValueSet-expand' },
        instantiates: TERMINOLOGY_SERVER,
      },
      responses: { 200: { description: 'ValueSet with an expansion', schema: { type: 'object' } } },
      handler: (request) => expand(terminology, request.params, request.signal),
    }),
    defineEndpoint({
      method: 'GET',
      path: `${FHIR_BASE}/InsurancePlan/$counties`,
      tag: 'terminology',
      summary: "A state's counties (FIPS), sorted by name, then the list they come from",
      description: 'Says nothing about whether a plan is sold in a county.',
      params: {
        state: required(
          param.string('USPS code of a state, DC or a territory, e.g. MD', { pattern: /^[A-Za-z]{2}$/ }),
        ),
      },
      fhir: {
        resource: 'InsurancePlan',
        operation: { name: 'counties', definition: 'urn:svc:OperationDefinition:InsurancePlan-counties' },
      },
      responses: { 200: PARAMETERS },
      handler: (request, { db }) => ({
        body: countiesOf(db, request.params.state.toUpperCase()),
        reuse: { stillTrue: releasesUnchanged(db) },
      }),
    }),
  ]
}
