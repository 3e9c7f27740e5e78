import type { DataSet } from '../../api/domain.js'
import type { PublisherStatus } from '../../stats/publisherStatus.js'
import type { HourTally } from '../../stats/requestSearch.js'
import { type Chrome, Chart, formatCount, formatTime, Layout, Scroll } from './layout.js'

export interface LiveFigures {
  requestsPerMinute: number
  p50Ms: number | null
  p99Ms: number | null
  errorRate: number
}

export const formatMs = (ms: number | null) =>
  ms === null ? '–' : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`
export const formatRate = (rate: number) => `${(rate * 100).toFixed(rate < 0.1 ? 2 : 1)} %`

const hourLabel = (hour: number) => formatTime(new Date(hour * 3_600_000).toISOString()).slice(0, 16)
const dayLabel = (hour: number) => new Date(hour * 3_600_000).toISOString().slice(0, 10)

export function tallyRows(tallies: readonly HourTally[], label: 'hour' | 'day') {
  return tallies.map((tally) => ({
    label: label === 'hour' ? hourLabel(tally.hour) : dayLabel(tally.hour),
    values: [tally.requests, tally.limited, tally.failed],
  }))
}

export function OverviewPage(props: {
  chrome: Chrome
  live: LiveFigures
  hours: HourTally[]
  days: HourTally[]
  publishers: PublisherStatus[]
  dataSets: DataSet[]
}) {
  const { live } = props
  return (
    <Layout title="Overview" chrome={props.chrome} scripts>
      <section aria-labelledby="live-heading">
        <h2 id="live-heading">Now</h2>
        <dl className="figures" data-live-source="/dashboard/live.json">
          <div>
            <dt>Requests a minute</dt>
            <dd data-live="requestsPerMinute">{formatCount(live.requestsPerMinute)}</dd>
          </div>
          <div>
            <dt>Latency p50</dt>
            <dd data-live="p50Ms">{formatMs(live.p50Ms)}</dd>
          </div>
          <div>
            <dt>Latency p99</dt>
            <dd data-live="p99Ms">{formatMs(live.p99Ms)}</dd>
          </div>
          <div>
            <dt>Error rate (5xx)</dt>
            <dd data-live="errorRate">{formatRate(live.errorRate)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="traffic-heading">
        <h2 id="traffic-heading">Traffic</h2>
        <Chart
          id="hours"
          caption="Requests per hour, last 7 days"
          series={['Requests', '429', '5xx']}
          rows={tallyRows(props.hours, 'hour')}
        />
        <Chart
          id="days"
          caption="Requests per day, last 30 days"
          series={['Requests', '429', '5xx']}
          rows={tallyRows(props.days, 'day')}
        />
      </section>
      <section aria-labelledby="publishers-heading">
        <h2 id="publishers-heading">Publishers’ freshness</h2>
        <PublisherFreshness publishers={props.publishers} />
      </section>
      <section aria-labelledby="data-heading">
        <h2 id="data-heading">Data releases</h2>
        <DataSetTable dataSets={props.dataSets} />
      </section>
    </Layout>
  )
}

function PublisherFreshness({ publishers }: { publishers: PublisherStatus[] }) {
  if (publishers.length === 0)
    return (
      <p>
        No publishers; add one with <code>svc publishers add</code>.
      </p>
    )
  return (
    <Scroll label="Publishers’ freshness">
      <table>
        <thead>
          <tr>
            <th scope="col">Publisher</th>
            <th scope="col">Last sync</th>
            <th scope="col">Result</th>
            <th scope="col">Slots</th>
          </tr>
        </thead>
        <tbody>
          {publishers.map((publisher) => (
            <tr key={publisher.slug}>
              <th scope="row">{publisher.name}</th>
              <td>{formatTime(publisher.lastSyncAt)}</td>
              <td>{publisher.lastSyncResult ?? '–'}</td>
              <td>{publisher.slotsHeld === null ? '–' : formatCount(publisher.slotsHeld)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  )
}

export function DataSetTable({ dataSets }: { dataSets: DataSet[] }) {
  if (dataSets.length === 0) return <p>Nothing imported yet.</p>
  return (
    <Scroll label="Data releases">
      <table>
        <thead>
          <tr>
            <th scope="col">Data set</th>
            <th scope="col">Release</th>
            <th scope="col">Imported</th>
            <th scope="col">Holds</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {dataSets.map((set) => (
            <tr key={`${set.kind} ${set.name}`}>
              <th scope="row">{set.kind}</th>
              <td>{set.name}</td>
              <td>{formatTime(set.importedAt)}</td>
              <td>{set.holds}</td>
              <td className="wrap">{set.source}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  )
}
