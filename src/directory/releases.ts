import type { Db } from '../db/open.js'
import { activeRelease, releaseFileName as storeReleaseFileName } from '../fhir/store/releases.js'
import { DIRECTORY_STORE } from './declaration.js'

/** The directory release served, if one was imported. */
export const activeDirectoryRelease = (db: Db) => activeRelease(db, DIRECTORY_STORE.name)

/** A directory release's file name, beside the main file: `data/svc.db` → `svc.directory-7.db`. */
export const releaseFileName = (mainPath: string, release: number) =>
  storeReleaseFileName(mainPath, DIRECTORY_STORE.name, release)
