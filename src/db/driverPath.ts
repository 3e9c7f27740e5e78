import { createRequire } from 'node:module'

/**
 * Where better-sqlite3 is, for threads started from a program string (they cannot import the TypeScript
 * sources tests and benchmarks run, so they `require` the driver by this path).
 */
export const SQLITE_DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

/**
 * The start of such a thread's program, after `workerData` is in scope: `Database`, the driver, and
 * `setUp(steps)`, which runs the thread's opening steps so that an error of theirs leaves the thread whole. A
 * SqliteError is not an Error to structured clone: thrown out of a thread as it is, it arrives as `{ code }`,
 * its message lost (an import on a full disk said "undefined").
 */
export const THREAD_DRIVER = `
const Database = require(workerData.driver)
const setUp = (steps) => {
  try {
    return steps()
  } catch (error) {
    throw Object.assign(new Error(String(error && error.message)), { code: error && error.code })
  }
}
`
