import type { DataSet } from '../../api/domain.js'
import type { PublisherStatus } from '../../stats/publisherStatus.js'
import { ActionButton, type Chrome, formatCount, formatTime, Layout, Scroll } from './layout.js'
import { DataSetTable } from './overview.js'

export function DataPage(props: { chrome: Chrome; publishers: PublisherStatus[]; dataSets: DataSet[] }) {
  const { chrome } = props
  return (
    <Layout title="Data" chrome={chrome}>
      <h2>Publishers</h2>
      {props.publishers.length === 0 ? (
        <p>
          No publishers; add one with <code>svc publishers add</code>.
        </p>
      ) : (
        <Scroll label="Publishers">
          <table>
            <thead>
              <tr>
                <th scope="col">Publisher</th>
                <th scope="col">Enabled</th>
                <th scope="col">Last sync</th>
                <th scope="col">Slots</th>
                <th scope="col">Last result</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.publishers.map((publisher) => {
                const base = `/dashboard/publishers/${encodeURIComponent(publisher.slug)}`
                return (
                  <tr key={publisher.slug}>
                    <th scope="row">
                      {publisher.name} <span className="muted">{publisher.slug}</span>
                    </th>
                    <td>{publisher.enabled ? 'yes' : 'no'}</td>
                    <td>{formatTime(publisher.lastSyncAt)}</td>
                    <td>{publisher.slotsHeld === null ? '–' : formatCount(publisher.slotsHeld)}</td>
                    <td className="wrap">{publisher.lastSyncResult ?? '–'}</td>
                    <td className="actions">
                      <ActionButton
                        action={`${base}/${publisher.enabled ? 'disable' : 'enable'}`}
                        csrf={chrome.csrf}
                        label={`${publisher.enabled ? 'Disable' : 'Enable'} ${publisher.name}`}
                        text={publisher.enabled ? 'Disable' : 'Enable'}
                      />
                      <ActionButton
                        action={`${base}/sync`}
                        csrf={chrome.csrf}
                        label={`Sync ${publisher.name} now`}
                        text="Sync now"
                      />
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </Scroll>
      )}
      <h2>Imported data</h2>
      <DataSetTable dataSets={props.dataSets} />
    </Layout>
  )
}
