import { basename, dirname, extname, join } from 'node:path'
import type { Db } from '../../db/open.js'

/**
 * A store's releases, in its `<name>_releases` table (a domain's own schema step creates it):
 * loading (being built), active (served), replaced, failed. A release's file lives beside the main one.
 */

/** The release searches answer from: `file` null for one imported before releases had files of their own. */
export interface ActiveRelease {
  id: number
  file: string | null
}

export const releasesTable = (store: string) => `${store}_releases`

export function activeRelease(db: Db, store: string): ActiveRelease | undefined {
  return db
    .statement(`SELECT id, file FROM ${releasesTable(store)} WHERE state = 'active' ORDER BY id DESC LIMIT 1`)
    .get() as ActiveRelease | undefined
}

/** A release's file name, beside the main file: `data/svc.db` → `svc.directory-7.db`. */
export function releaseFileName(mainPath: string, store: string, release: number): string {
  const extension = extname(mainPath)
  return `${basename(mainPath, extension)}.${store}-${release}${extension}`
}

/** Where a release file is: names are stored relative, so the data folder can move. */
export const releasePath = (mainPath: string, file: string) => join(dirname(mainPath), file)
