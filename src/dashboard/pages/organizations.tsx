import type { ApiKeyRecord } from '../../accounts/keys.js'
import type { Organization } from '../../accounts/orgs.js'
import type { Plan } from '../../accounts/plans.js'
import type { HourTally } from '../../stats/requestSearch.js'
import type { OrgQuota } from '../../stats/quota.js'
import { ActionButton, type Chrome, Chart, Csrf, formatCount, formatTime, Layout, Scroll } from './layout.js'
import { tallyRows } from './overview.js'

const orgPath = (slug: string) => `/dashboard/organizations/${encodeURIComponent(slug)}`

function PlanSelect({ plans, selected }: { plans: Plan[]; selected?: string }) {
  return (
    <select name="plan" defaultValue={selected ?? plans[0]?.id}>
      {plans.map((plan) => (
        <option key={plan.id} value={plan.id}>
          {`${plan.name} (${formatCount(plan.monthlyLimit)} a month, ${formatCount(plan.minuteLimit)} a minute)`}
        </option>
      ))}
    </select>
  )
}

export function OrganizationsPage(props: { chrome: Chrome; quota: OrgQuota[]; plans: Plan[] }) {
  return (
    <Layout title="Organizations" chrome={props.chrome}>
      {props.quota.length === 0 ? (
        <p>No organizations yet.</p>
      ) : (
        <Scroll label="Organizations">
          <table>
            <thead>
              <tr>
                <th scope="col">Organization</th>
                <th scope="col">Plan</th>
                <th scope="col">This month</th>
                <th scope="col">This minute</th>
              </tr>
            </thead>
            <tbody>
              {props.quota.map((row) => (
                <tr key={row.org}>
                  <th scope="row">
                    <a href={orgPath(row.org)}>{row.name}</a> <span className="muted">{row.org}</span>
                  </th>
                  <td>{row.plan}</td>
                  <td>
                    <meter
                      min={0}
                      max={row.month.limit}
                      value={Math.min(row.month.used, row.month.limit)}
                      aria-label={`${row.name}: month's use`}
                    />{' '}
                    {`${formatCount(row.month.used)} of ${formatCount(row.month.limit)}`}
                  </td>
                  <td>{`${formatCount(row.minute.used)} of ${formatCount(row.minute.limit)}`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <h2>Create an organization</h2>
      <form method="post" action="/dashboard/organizations" className="stack narrow">
        <Csrf token={props.chrome.csrf} />
        <label>
          Slug
          <input name="slug" required pattern="[a-z0-9][a-z0-9\-]{0,62}" aria-describedby="slug-help" />
        </label>
        <p id="slug-help" className="muted">
          Lowercase letters, digits and inner hyphens, e.g. acme-health.
        </p>
        <label>
          Name
          <input name="name" />
        </label>
        <label>
          Plan
          <PlanSelect plans={props.plans} />
        </label>
        <button type="submit">Create organization</button>
      </form>
    </Layout>
  )
}

export function OrganizationPage(props: {
  chrome: Chrome
  org: Organization
  quota: OrgQuota | undefined
  plans: Plan[]
  keys: ApiKeyRecord[]
  /** A key just created: its secret, shown this once. */
  created?: { id: string; key: string }
  days: HourTally[]
}) {
  const { org, chrome } = props
  const base = orgPath(org.slug)
  return (
    <Layout title={org.name} chrome={chrome} scripts>
      <p className="muted">{`Organization ${org.slug}, created ${formatTime(org.createdAt)}`}</p>
      {props.created && (
        <section className="secret" aria-labelledby="secret-heading">
          <h2 id="secret-heading">Your new key</h2>
          <p>Copy it now: it is shown this once and cannot be shown again.</p>
          <p className="copyline">
            <code id="new-key">{props.created.key}</code>{' '}
            <button type="button" data-copy="new-key">
              Copy key
            </button>
          </p>
        </section>
      )}
      {props.quota && (
        <p>{`This month: ${formatCount(props.quota.month.used)} of ${formatCount(props.quota.month.limit)} requests; this minute: ${formatCount(props.quota.minute.used)} of ${formatCount(props.quota.minute.limit)}.`}</p>
      )}
      <h2>Plan</h2>
      <form method="post" action={`${base}/plan`} className="row">
        <Csrf token={chrome.csrf} />
        <label>
          Plan
          <PlanSelect plans={props.plans} selected={org.plan} />
        </label>
        <button type="submit">Change plan</button>
      </form>
      <h2>API keys</h2>
      {props.keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <Scroll label="API keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Revoked</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.keys.map((key) => (
                <tr key={key.id}>
                  <th scope="row">
                    <code>{key.prefix}</code> <span className="muted">{key.id}</span>
                  </th>
                  <td>{key.name ?? '–'}</td>
                  <td>{formatTime(key.createdAt)}</td>
                  <td>{formatTime(key.lastUsedAt)}</td>
                  <td>{formatTime(key.revokedAt)}</td>
                  <td>
                    {key.revokedAt === null && (
                      <ActionButton
                        action={`${base}/keys/${encodeURIComponent(key.id)}/revoke`}
                        csrf={chrome.csrf}
                        label={`Revoke key ${key.name ?? key.prefix}`}
                        text="Revoke"
                        danger
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <form method="post" action={`${base}/keys`} className="row">
        <Csrf token={chrome.csrf} />
        <label>
          Key name
          <input name="name" placeholder="booking app" />
        </label>
        <button type="submit">Create key</button>
      </form>
      <h2>Use this month</h2>
      <Chart
        id="month"
        caption="Requests per day this month"
        series={['Requests', '429', '5xx']}
        rows={tallyRows(props.days, 'day')}
      />
      <p>
        <a href={`/dashboard/requests?org=${encodeURIComponent(org.slug)}`}>This organization’s requests</a>
      </p>
    </Layout>
  )
}

export function RevokeConfirmPage(props: { chrome: Chrome; org: Organization; apiKey: ApiKeyRecord }) {
  const base = orgPath(props.org.slug)
  return (
    <Layout title="Revoke this key?" chrome={props.chrome}>
      <p>
        {`Key ${props.apiKey.prefix} (${props.apiKey.name ?? 'no name'}) of ${props.org.name} will be refused by every running server from its next request. This cannot be undone.`}
      </p>
      <div className="row">
        <ActionButton
          action={`${base}/keys/${encodeURIComponent(props.apiKey.id)}/revoke`}
          csrf={props.chrome.csrf}
          label={`Revoke key ${props.apiKey.name ?? props.apiKey.prefix} for good`}
          text="Revoke"
          fields={{ confirm: 'yes' }}
          danger
        />
        <a href={base}>Cancel</a>
      </div>
    </Layout>
  )
}
