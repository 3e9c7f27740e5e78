import { fileURLToPath } from 'node:url'

/** Where the repository keeps the public sample data tests read (see each folder's README for its source). */
const inRepository = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))

/** The SMART Scheduling Links example publisher (data/README.md). */
export const SMART_EXAMPLES = inRepository('data/scheduling/smart-examples')
/** The NUCC Health Care Provider Taxonomy CSV (data/demo/terminology/README.md). */
export const NUCC_CSV = inRepository('data/demo/terminology/nucc_provider_taxonomy.csv')
/** The Plan-Net sample directory, plain NDJSON (test/fixtures/directory/README.md). */
export const PLAN_NET = inRepository('test/fixtures/directory/plan-net')
/** Excerpts of the federal plan files, and rows built in their layouts (test/fixtures/plans/README.md). */
export const PLANS = inRepository('test/fixtures/plans')
/** The curated Questionnaires, as published (data/questionnaires/README.md). */
export const QUESTIONNAIRES = inRepository('data/questionnaires')
/** Synthetic patients' medication records (test/fixtures/medlist/README.md). */
export const MEDLIST = inRepository('test/fixtures/medlist')
/** A small RxNorm release in NLM's RRF layout, built for tests (test/fixtures/rxnorm/README.md). */
export const RXNORM_RELEASE = inRepository('test/fixtures/rxnorm/RxNorm_full_prescribe_11032025')
