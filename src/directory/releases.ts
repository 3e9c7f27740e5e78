import { basename, dirname, extname, join } from 'node:path'
import type { Db } from '../db/open.js'

/** The release searches answer from: `file` null for one imported before releases had files of their own. */
export interface ActiveRelease {
  id: number
  file: string | null
}

export function activeRelease(db: Db): ActiveRelease | undefined {
  return db
    .statement("SELECT id, file FROM directory_releases WHERE state = 'active' ORDER BY id DESC LIMIT 1")
    .get() as ActiveRelease | undefined
}

/** A release's file name, beside the main file: `data/svc.db` → `svc.directory-7.db`. */
export function releaseFileName(mainPath: string, release: number): string {
  const extension = extname(mainPath)
  return `${basename(mainPath, extension)}.directory-${release}${extension}`
}

/** Where a release file is: names are stored relative, so the data folder can move. */
export const releasePath = (mainPath: string, file: string) => join(dirname(mainPath), file)
