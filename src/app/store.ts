import type { Db } from '../db/open.js'
import { type OpenOptions, openMainFile, openStoreFiles, type Store, type StoreSchema } from '../db/open.js'
import { openLiveFile } from '../db/live.js'
import { stepsOf } from '../db/migrate.js'
import { DOMAINS } from './domains.js'

/** Every domain's schema steps, for both files of the store. */
export const STORE_SCHEMA: StoreSchema = {
  main: stepsOf(DOMAINS.map((domain) => ({ name: domain.name, steps: domain.steps }))),
  live: stepsOf(DOMAINS.map((domain) => ({ name: domain.name, steps: domain.liveSteps }))),
}

/** The main file, its schema brought up to date (both files' when a step moves tables to the live one). */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  return openMainFile(path, STORE_SCHEMA, options)
}

/** The live file alone (src/db/live.ts), its schema brought up to date. */
export function openLiveStore(config: { db: string }, options: OpenOptions = {}): Db {
  return openLiveFile(config, STORE_SCHEMA.live, options)
}

/** Both files of the store named by `config.db`, their schemas brought up to date. */
export function openStore(config: { db: string }, options: OpenOptions = {}): Store {
  return openStoreFiles(config, STORE_SCHEMA, options)
}
