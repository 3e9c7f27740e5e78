import { keyOrgId } from '../../accounts/keys.js'
import { listOrganizations } from '../../accounts/orgs.js'
import { findRequest } from '../../stats/requestLog.js'
import { searchRequests, statusBounds } from '../../stats/requestSearch.js'
import { type Kit, type Route, segment } from '../kit.js'
import { RefusedPage } from '../pages/signIn.js'
import { type RequestQuery, RequestPage, RequestsPage } from '../pages/requests.js'
import { seeOther, send } from '../respond.js'

/** The request log: filtered lists, and one request by its X-Request-Id (what `svc requests show` prints). */
export function requestRoutes(kit: Kit): Route[] {
  const { db, live } = kit.deps
  return [
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests$/,
      handle: (ctx, _match, signed) => {
        const q = ctx.request.query
        const text = (name: string) => (typeof q[name] === 'string' ? (q[name] as string).trim() : '')
        const query: RequestQuery = {
          org: text('org'),
          key: text('key'),
          status: text('status'),
          path: text('path'),
          from: text('from'),
          to: text('to'),
        }
        const orgs = listOrganizations(db)
        const faults: string[] = []
        const org = query.org ? orgs.find((candidate) => candidate.slug === query.org) : undefined
        if (query.org && !org) faults.push(`No organization ${query.org}.`)
        // A key belongs to one organization: its requests are found through the organization's index.
        const keyOrg = query.key ? keyOrgId(db, query.key) : undefined
        if (query.key && keyOrg === undefined) faults.push(`No key ${query.key}.`)
        if (org && keyOrg !== undefined && keyOrg !== org.id)
          faults.push(`Key ${query.key} is not ${org.slug}'s.`)
        if (query.status && !statusBounds(query.status))
          faults.push('Status is a class such as 4xx, or one status such as 429.')
        const time = (value: string, name: string) => {
          if (!value) return undefined
          const ms = Date.parse(/Z$|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`)
          if (Number.isNaN(ms)) faults.push(`${name} is not a date and time.`)
          return Number.isNaN(ms) ? undefined : ms
        }
        const from = time(query.from, 'From')
        const to = time(query.to, 'To')
        const before = /^(\d+)\.(\d+)$/.exec(text('before'))
        const page =
          faults.length > 0
            ? { rows: [], next: undefined, walkedLimit: false }
            : searchRequests(
                live,
                {
                  orgId: org?.id ?? keyOrg,
                  keyId: query.key || undefined,
                  status: query.status || undefined,
                  pathPrefix: query.path || undefined,
                  from,
                  to,
                },
                before ? { at: Number(before[1]), rowid: Number(before[2]) } : undefined,
              )
        const slugs = new Map(orgs.map((candidate) => [candidate.id, candidate.slug]))
        const older = page.next
          ? `/dashboard/requests?${new URLSearchParams({ ...query, before: `${page.next.at}.${page.next.rowid}` })}`
          : undefined
        const chrome = kit.chromeOf(signed, 'requests')
        send(
          ctx,
          <RequestsPage
            chrome={{ ...chrome, error: faults.join(' ') || undefined }}
            query={query}
            orgs={orgs}
            rows={page.rows.map((row) => ({
              ...row,
              org: row.orgId === null ? null : (slugs.get(row.orgId) ?? null),
            }))}
            older={older}
            walkedTo={page.walkedLimit && page.next ? page.next.at : undefined}
          />,
          faults.length > 0 ? 400 : 200,
        )
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests\/find$/,
      handle: (ctx) => {
        const id = typeof ctx.request.query.id === 'string' ? ctx.request.query.id.trim() : ''
        seeOther(ctx, `/dashboard/requests/${encodeURIComponent(id)}`)
      },
    },
    {
      method: 'GET',
      pattern: /^\/dashboard\/requests\/([^/]+)$/,
      handle: (ctx, match, signed) => {
        const id = segment(match)
        const request = findRequest({ db, live }, id)
        if (!request) {
          send(
            ctx,
            <RefusedPage
              chrome={kit.chromeOf(signed, 'requests')}
              reason={`No request ${id} in the log (requests are kept 30 days).`}
            />,
            404,
          )
          return
        }
        send(ctx, <RequestPage chrome={kit.chromeOf(signed, 'requests')} request={request} />)
      },
    },
  ]
}
