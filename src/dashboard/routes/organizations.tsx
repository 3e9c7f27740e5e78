import { createKey, listKeys, revokeKey } from '../../accounts/keys.js'
import { createOrganization, requireOrganization, setOrganizationPlan } from '../../accounts/orgs.js'
import { listPlans } from '../../accounts/plans.js'
import { bucketed, hourOf, requestsByHour } from '../../stats/requestSearch.js'
import { formOf, type Kit, type Route, segment } from '../kit.js'
import { OrganizationPage, OrganizationsPage, RevokeConfirmPage } from '../pages/organizations.js'
import { send } from '../respond.js'

const DAY_MS = 24 * 3_600_000

/** Organizations and their keys: what `svc orgs` and `svc keys` do. */
export function organizationRoutes(kit: Kit): Route[] {
  const { db, live, clock } = kit.deps
  return [
    {
      method: 'GET',
      pattern: /^\/dashboard\/organizations$/,
      handle: async (ctx, _match, signed) => {
        send(
          ctx,
          <OrganizationsPage
            chrome={kit.chromeOf(signed, 'organizations', await kit.flashOf(signed))}
            quota={kit.quota().sort((a, b) => a.org.localeCompare(b.org))}
            plans={listPlans(db)}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations$/,
      handle: async (ctx, _match, signed) => {
        const form = formOf(ctx)
        const slug = (form.get('slug') ?? '').trim()
        // Where the new organization's page will be; a refused slug comes back to the list.
        const created = () => `/dashboard/organizations/${encodeURIComponent(slug)}`
        await kit.act(ctx, signed, '/dashboard/organizations', () => {
          createOrganization(
            db,
            { slug, name: form.get('name')?.trim() || undefined, plan: form.get('plan') || undefined },
            clock(),
          )
          return { notice: `Organization ${slug} created.`, next: created() }
        })
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/organizations\/([^/]+)$/,
      handle: async (ctx, match, signed) => {
        const org = requireOrganization(db, segment(match))
        const now = clock()
        const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)
        const days = Math.floor((now - monthStart) / DAY_MS) + 1
        const flash = await kit.flashOf(signed)
        send(
          ctx,
          <OrganizationPage
            chrome={kit.chromeOf(signed, 'organizations', flash)}
            org={org}
            quota={kit.quota().find((row) => row.org === org.slug)}
            plans={listPlans(db)}
            keys={listKeys({ db, live }, org.slug)}
            created={flash.created}
            days={bucketed(
              requestsByHour(live, hourOf(monthStart), hourOf(now) + 1, org.id),
              monthStart,
              days,
              24,
            )}
          />,
        )
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/plan$/,
      handle: (ctx, match, signed) => {
        const slug = segment(match)
        const plan = formOf(ctx).get('plan') ?? ''
        return kit.act(ctx, signed, `/dashboard/organizations/${encodeURIComponent(slug)}`, () => {
          const org = setOrganizationPlan(db, slug, plan)
          return { notice: `${org.name} is now on the ${plan} plan.` }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/keys$/,
      handle: (ctx, match, signed) => {
        const slug = segment(match)
        const name = formOf(ctx).get('name')?.trim() || undefined
        return kit.act(ctx, signed, `/dashboard/organizations/${encodeURIComponent(slug)}`, () => {
          const created = createKey(db, { org: slug, name }, clock())
          return { notice: `Key ${created.id} created.`, created: { id: created.id, key: created.key } }
        })
      },
    },
    {
      method: 'POST',
      pattern: /^\/dashboard\/organizations\/([^/]+)\/keys\/([^/]+)\/revoke$/,
      handle: (ctx, match, signed) => {
        const org = requireOrganization(db, segment(match))
        const keyId = segment(match, 2)
        const location = `/dashboard/organizations/${encodeURIComponent(org.slug)}`
        const key = listKeys({ db, live }, org.slug).find((record) => record.id === keyId)
        if (!key) return kit.act(ctx, signed, location, () => ({ error: `No key ${keyId} in ${org.slug}` }))
        if (formOf(ctx).get('confirm') !== 'yes') {
          send(
            ctx,
            <RevokeConfirmPage chrome={kit.chromeOf(signed, 'organizations')} org={org} apiKey={key} />,
          )
          return
        }
        return kit.act(ctx, signed, location, () => {
          revokeKey({ db, live }, keyId, clock())
          return { notice: `Key ${key.prefix} revoked: every server refuses it from its next request.` }
        })
      },
    },
  ]
}
