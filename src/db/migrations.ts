import { ACCOUNTS_MIGRATIONS } from '../accounts/schema.js'
import { DIRECTORY_MIGRATIONS } from '../directory/schema.js'
import { SCHEDULING_MIGRATIONS } from '../scheduling/schema.js'
import { STATS_MIGRATIONS } from '../stats/schema.js'
import { TERMINOLOGY_MIGRATIONS } from '../terminology/schema.js'
import type { Migration } from './migrate.js'

/** Every domain's numbered migrations, in one list so numbers never collide. Append; never edit a shipped one. */
export const MIGRATIONS: readonly Migration[] = [
  ...ACCOUNTS_MIGRATIONS,
  ...STATS_MIGRATIONS,
  ...SCHEDULING_MIGRATIONS,
  ...TERMINOLOGY_MIGRATIONS,
  ...DIRECTORY_MIGRATIONS,
]
