import { createRequire } from 'node:module'

/**
 * Where better-sqlite3 is, for threads started from a program string (they cannot import the TypeScript
 * sources tests and benchmarks run, so they `require` the driver by this path).
 */
export const SQLITE_DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')
