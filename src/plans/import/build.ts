import type { County } from '../../geo/counties.js'
import type { Staging } from './staging.js'

type Resource = Record<string, unknown>

/** What building one partition's plans from the staging file needs, and where each plan goes. */
export interface BuildContext {
  staging: Staging
  year: number
  release: string
  /** The import's file names, by their index in the staging rows. */
  fileNames: readonly string[]
  counties: ReadonlyMap<string, County>
  /** A note on how a row was read (a cost kept as text, a network the files do not name). */
  report(file: number, line: number, message: string): void
  /** A row left out, and why. */
  refuse(file: number, line: number, message: string): void
  /**
   * A plan built from rows of `files`, first read at `origin`; a promise to await before the next when the
   * release's writer is behind. `json`, when given, is the plan's text, and `resource` may then lack what
   * no search parameter reads (the ACA build writes its cost-sharing lists as text only).
   */
  emit(
    resource: Resource,
    origin: { file: number; line: number },
    files: ReadonlySet<number>,
    json?: string,
  ): Promise<void> | undefined
}
