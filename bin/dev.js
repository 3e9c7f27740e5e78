#!/usr/bin/env -S node --import tsx
// Runs the CLI from TypeScript sources (no build); used by tests that start real `svc` processes.
import { execute } from '@oclif/core'

await execute({ development: true, dir: import.meta.url })
