import type { Organization } from '../../accounts/orgs.js'
import type { LoggedRequest } from '../../stats/requestLog.js'
import type { ListedRequest } from '../../stats/requestSearch.js'
import { type Chrome, formatCount, formatTime, Layout, Scroll } from './layout.js'

export interface RequestQuery {
  org: string
  key: string
  status: string
  path: string
  from: string
  to: string
}

export function RequestsPage(props: {
  chrome: Chrome
  query: RequestQuery
  orgs: Organization[]
  rows: (ListedRequest & { org: string | null })[]
  /** The link to the next (older) page, if any. */
  older?: string
  /** When the page stopped walking the log before filling up: the time of the last request it looked at. */
  walkedTo?: number
}) {
  const { query } = props
  return (
    <Layout title="Requests" chrome={props.chrome}>
      <form method="get" action="/dashboard/requests/find" className="row">
        <label>
          Request id
          <input name="id" placeholder="X-Request-Id" required />
        </label>
        <button type="submit">Find request</button>
      </form>
      <form method="get" action="/dashboard/requests" className="filters">
        <label>
          Organization
          <select name="org" defaultValue={query.org}>
            <option value="">Any</option>
            {props.orgs.map((org) => (
              <option key={org.slug} value={org.slug}>
                {org.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key id
          <input name="key" defaultValue={query.key} placeholder="key_…" />
        </label>
        <label>
          Status
          <input name="status" defaultValue={query.status} placeholder="4xx or 429" />
        </label>
        <label>
          Path prefix
          <input name="path" defaultValue={query.path} placeholder="/v1/fhir/r4/" />
        </label>
        <label>
          From (UTC)
          <input type="datetime-local" name="from" defaultValue={query.from} />
        </label>
        <label>
          To (UTC)
          <input type="datetime-local" name="to" defaultValue={query.to} />
        </label>
        <button type="submit">Filter requests</button>
      </form>
      {props.rows.length === 0 ? (
        <p>No request matches, in the 30 days kept.</p>
      ) : (
        <Scroll label="Requests">
          <table>
            <caption>Newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Status</th>
                <th scope="col">Method and path</th>
                <th scope="col">Organization</th>
                <th scope="col">Time</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((row) => (
                <tr key={row.requestId}>
                  <td>{formatTime(new Date(row.at).toISOString())}</td>
                  <td>{row.status}</td>
                  <td className="wrap">{`${row.method} ${row.path}`}</td>
                  <td>{row.org ?? '–'}</td>
                  <td>{`${row.durationMs.toFixed(1)} ms`}</td>
                  <td>
                    <a href={`/dashboard/requests/${row.requestId}`}>{row.requestId}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {props.walkedTo !== undefined && (
        <p role="status">
          {`Searched back to ${formatTime(new Date(props.walkedTo).toISOString())}; older requests may match too.`}
        </p>
      )}
      {props.older && (
        <p>
          <a href={props.older} rel="next">
            Older requests
          </a>
        </p>
      )}
    </Layout>
  )
}

export function RequestPage(props: { chrome: Chrome; request: LoggedRequest }) {
  const { request } = props
  const fields: [string, string][] = [
    ['Request id', request.requestId],
    ['When', formatTime(new Date(request.at).toISOString())],
    ['Organization', request.org ?? '–'],
    ['Key', request.keyId ?? '–'],
    ['Method', request.method],
    ['Path', request.path],
    ['Endpoint', request.route ?? '–'],
    ['Status', String(request.status)],
    ['Time', `${request.durationMs.toFixed(2)} ms`],
    ['Bytes', formatCount(request.bytes)],
  ]
  return (
    <Layout title="Request" chrome={props.chrome}>
      <dl className="fields">
        {fields.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd className="wrap">{value}</dd>
          </div>
        ))}
      </dl>
      <p>
        <a href="/dashboard/requests">All requests</a>
      </p>
    </Layout>
  )
}
