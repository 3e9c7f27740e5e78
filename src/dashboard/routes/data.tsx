import { type Kit, type Route, segment } from '../kit.js'
import { DataPage } from '../pages/data.js'
import { send } from '../respond.js'

/** Publishers (enable, disable, sync now) and every data set imported. */
export function dataRoutes(kit: Kit): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/dashboard\/data$/,
      handle: async (ctx, _match, signed) => {
        send(
          ctx,
          <DataPage
            chrome={kit.chromeOf(signed, 'data', await kit.flashOf(signed))}
            publishers={kit.publishers()}
            dataSets={kit.deps.dataSets()}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/publishers\/([^/]+)\/(enable|disable)$/,
      handle: (ctx, match, signed) => {
        const slug = segment(match)
        const enable = match[2] === 'enable'
        return kit.act(ctx, signed, '/dashboard/data', () => {
          kit.deps.publishers.setEnabled(slug, enable)
          return { notice: `Publisher ${slug} ${enable ? 'enabled' : 'disabled'}.` }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/publishers\/([^/]+)\/sync$/,
      handle: (ctx, match, signed) => {
        const slug = segment(match)
        return kit.act(ctx, signed, '/dashboard/data', () => {
          const outcome = kit.deps.publishers.syncNow(slug)
          return outcome.started
            ? { notice: `Sync of ${slug} started; reload to see its result.` }
            : { error: `Sync of ${slug} refused: ${outcome.reason}.` }
        })
      },
    },
  ]
}
