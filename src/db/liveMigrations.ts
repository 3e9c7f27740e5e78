import { ACCOUNTS_LIVE_MIGRATIONS } from '../accounts/schema.js'
import { STATS_LIVE_MIGRATIONS } from '../stats/schema.js'
import type { Migration } from './migrate.js'

/**
 * The live database's numbered migrations (src/db/live.ts), counted by that file's own user_version.
 * Ranges: accounts 1-9, stats 10-19. Append; never edit a shipped one.
 */
export const LIVE_MIGRATIONS: readonly Migration[] = [...ACCOUNTS_LIVE_MIGRATIONS, ...STATS_LIVE_MIGRATIONS]
