import { bucketed } from '../../stats/requestSearch.js'
import type { Kit, Route } from '../kit.js'
import { OverviewPage } from '../pages/overview.js'
import { send } from '../respond.js'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/** The overview, and the live figures its script refreshes. */
export function overviewRoutes(kit: Kit): Route[] {
  const { clock } = kit.deps
  return [
    {
      method: 'GET',
      pattern: /^\/dashboard\/?$/,
      handle: async (ctx, _match, signed) => {
        const now = clock()
        const weekAgo = now - 7 * DAY_MS + HOUR_MS
        const monthAgo = now - 30 * DAY_MS + DAY_MS
        const dayStart = Math.floor(monthAgo / DAY_MS) * DAY_MS
        const tallies = kit.hourly.read(dayStart, now)
        send(
          ctx,
          <OverviewPage
            chrome={kit.chromeOf(signed, 'overview', await kit.flashOf(signed))}
            live={kit.liveFigures()}
            hours={bucketed(tallies, weekAgo, 7 * 24, 1)}
            days={bucketed(tallies, dayStart, 30, 24)}
            publishers={kit.publishers()}
            dataSets={kit.deps.dataSets()}
          />,
        )
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/live\.json$/,
      handle: (ctx) => {
        ctx.type = 'application/json'
        ctx.body = JSON.stringify(kit.liveFigures())
      },
    },
  ]
}
