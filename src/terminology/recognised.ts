/**
 * Code systems the service knows by name even when a deployment holds no release of them and has no
 * source for them: asking about one is answered 503 `not-supported` rather than 404, and
 * TerminologyCapabilities names them as recognised but not served.
 */
export const RECOGNISED_SYSTEMS: ReadonlyMap<string, string> = new Map([
  ['http://snomed.info/sct', 'SNOMED CT'],
  ['http://loinc.org', 'LOINC'],
  ['http://www.nlm.nih.gov/research/umls/rxnorm', 'RxNorm'],
  ['http://hl7.org/fhir/sid/icd-10-cm', 'ICD-10-CM'],
  ['http://www.cms.gov/Medicare/Coding/ICD10', 'ICD-10-PCS'],
  ['http://hl7.org/fhir/sid/icd-10', 'ICD-10'],
  ['http://www.ama-assn.org/go/cpt', 'CPT'],
  ['https://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets', 'HCPCS Level II'],
  ['http://hl7.org/fhir/sid/ndc', 'NDC'],
  ['http://hl7.org/fhir/sid/cvx', 'CVX'],
  ['http://unitsofmeasure.org', 'UCUM'],
  ['http://nucc.org/provider-taxonomy', 'NUCC Health Care Provider Taxonomy'],
  ['urn:ietf:bcp:47', 'BCP 47 language tags'],
  ['urn:iso:std:iso:3166', 'ISO 3166 country codes'],
])
