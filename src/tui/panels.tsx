import { Box, Text } from 'ink'
import type { TopSnapshot } from '../stats/topSnapshot.js'
import {
  bar,
  type Column,
  fit,
  formatClock,
  formatCount,
  formatDuration,
  formatMs,
  formatRate,
  heading,
  row,
  sparkline,
} from './format.js'

/** Terminals at least this wide show lists side by side and request ids in full. */
export const WIDE = 120

/** Each panel draws into `width` columns and at most `limit` table rows; `selected` marks one row. */
interface TableProps {
  snapshot: TopSnapshot
  width: number
  limit: number
  selected?: number
}

/** Columns of fixed width around one that takes what is left of the line. */
function layout(width: number, fixed: Column[], flexAt: number, flexTitle: string, minFlex = 8): Column[] {
  const used = fixed.reduce((sum, column) => sum + column.width + 1, 0)
  const flex = { title: flexTitle, width: Math.max(minFlex, width - used) }
  return [...fixed.slice(0, flexAt), flex, ...fixed.slice(flexAt)]
}

function Table(props: {
  title: string
  columns: Column[]
  rows: string[][]
  limit: number
  selected?: number
  empty: string
}) {
  const { columns, rows, limit, selected } = props
  // Keep the selected row on screen when the list is longer than the space.
  const start = selected !== undefined && selected >= limit ? selected - limit + 1 : 0
  const shown = rows.slice(start, start + limit)
  return (
    <Box flexDirection="column">
      <Text bold>
        {props.title}
        {rows.length > limit ? <Text dimColor>{` (${rows.length}, ↑↓ to scroll)`}</Text> : null}
      </Text>
      {rows.length === 0 ? (
        <Text dimColor>{`  ${props.empty}`}</Text>
      ) : (
        <>
          <Text dimColor>{heading(columns)}</Text>
          {shown.map((cells, index) => (
            <Text key={index} inverse={start + index === selected}>
              {row(columns, cells)}
            </Text>
          ))}
        </>
      )}
    </Box>
  )
}

export function Header(props: { snapshot: TopSnapshot; database: string; width: number }) {
  const { snapshot } = props
  const right = `${formatClock(snapshot.at)} UTC · window ${snapshot.windowSeconds}s${
    snapshot.filter === null ? '' : ` · org ~ "${snapshot.filter}"`
  }`
  const left = `svc top · ${props.database}`
  const room = Math.max(0, props.width - right.length - 1)
  return (
    <Text>
      <Text bold color="cyan">
        {fit(left, room)}
      </Text>{' '}
      {right}
    </Text>
  )
}

export function Traffic(props: { snapshot: TopSnapshot; width: number }) {
  const { traffic } = props.snapshot
  const classes = traffic.byClass
  const label = `${(traffic.history.bucketSeconds * traffic.history.perSecond.length) / 60} min`
  const peak = Math.max(0, ...traffic.history.perSecond)
  const tail = ` peak ${formatRate(peak)}`
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Traffic </Text>
        {`${formatRate(traffic.perSecond)} now · ${formatCount(traffic.requests)} in ${props.snapshot.windowSeconds}s  `}
        <Text color="green">{`2xx ${formatCount(classes['2xx'])}`}</Text>
        {`  3xx ${formatCount(classes['3xx'])}  `}
        <Text color="yellow">{`4xx ${formatCount(classes['4xx'])}`}</Text>
        {'  '}
        <Text color="magenta">{`429 ${formatCount(classes['429'])}`}</Text>
        {'  '}
        <Text color="red">{`5xx ${formatCount(classes['5xx'])}`}</Text>
      </Text>
      <Text>
        <Text dimColor>{`${label.padEnd(7)}`}</Text>
        <Text color="cyan">
          {sparkline(traffic.history.perSecond, Math.max(0, props.width - 8 - tail.length))}
        </Text>
        <Text dimColor>{tail}</Text>
      </Text>
    </Box>
  )
}

export function LatencyGroups(props: TableProps) {
  const { overall, groups } = props.snapshot.latency
  const columns = layout(
    props.width,
    [
      { title: 'REQ', width: 6, align: 'right' },
      { title: 'P50', width: 7, align: 'right' },
      { title: 'P95', width: 7, align: 'right' },
      { title: 'P99', width: 7, align: 'right' },
    ],
    0,
    'GROUP',
  )
  const { servers } = props.snapshot
  // The worst of the processes: a request waits on the loop of whichever process took its connection.
  const loop =
    servers.length === 0
      ? ''
      : `  · event loop p99 ${formatMs(Math.max(...servers.map((server) => server.loopP99Ms)))} (${servers.length} ${servers.length === 1 ? 'process' : 'processes'})`
  const title = overall
    ? `Latency  p50 ${formatMs(overall.p50Ms)}  p95 ${formatMs(overall.p95Ms)}  p99 ${formatMs(overall.p99Ms)}${loop}`
    : `Latency${loop}`
  return (
    <Table
      title={title}
      columns={columns}
      limit={props.limit}
      empty={`no requests in the last ${props.snapshot.windowSeconds}s`}
      rows={groups.map((group) => [
        group.group,
        formatCount(group.requests),
        formatMs(group.p50Ms),
        formatMs(group.p95Ms),
        formatMs(group.p99Ms),
      ])}
    />
  )
}

export function TopEndpoints(props: TableProps) {
  const columns = layout(
    props.width,
    [
      { title: 'REQ', width: 6, align: 'right' },
      { title: 'ERR', width: 5, align: 'right' },
      { title: 'P95', width: 7, align: 'right' },
    ],
    0,
    'ENDPOINT',
  )
  return (
    <Table
      title="Top endpoints"
      columns={columns}
      limit={props.limit}
      selected={props.selected}
      empty="none yet"
      rows={props.snapshot.topEndpoints.map((endpoint) => [
        `${endpoint.method} ${endpoint.route}`,
        formatCount(endpoint.requests),
        formatCount(endpoint.errors),
        formatMs(endpoint.p95Ms),
      ])}
    />
  )
}

export const NO_KEY = '(no key)'

export function TopOrgs(props: TableProps) {
  const columns = layout(
    props.width,
    [
      { title: 'REQ', width: 6, align: 'right' },
      { title: 'ERR', width: 5, align: 'right' },
      { title: '429', width: 5, align: 'right' },
    ],
    0,
    'ORGANIZATION',
  )
  return (
    <Table
      title="Top organizations"
      columns={columns}
      limit={props.limit}
      selected={props.selected}
      empty="none yet"
      rows={props.snapshot.topOrgs.map((org) => [
        org.org ?? NO_KEY,
        formatCount(org.requests),
        formatCount(org.errors),
        formatCount(org.rejected),
      ])}
    />
  )
}

/** What the quota's STATE column says: refused by which limit, and until when for the month. */
export function quotaState(quota: TopSnapshot['quota'][number], at: string): string {
  if (quota.limited === 'month' && quota.resetsAt) {
    return `blocked ${formatDuration(Date.parse(quota.resetsAt) - Date.parse(at))}`
  }
  if (quota.limited === 'minute') return 'minute full'
  return quota.month.used >= quota.month.limit ? 'over month' : 'ok'
}

export function Quota(props: TableProps) {
  const barWidth = Math.max(6, Math.min(30, props.width - 68))
  const columns = layout(
    props.width,
    [
      { title: 'PLAN', width: 9 },
      { title: 'MINUTE', width: 11, align: 'right' },
      { title: 'MONTH', width: barWidth },
      { title: '', width: 11, align: 'right' },
      { title: '429', width: 5, align: 'right' },
      { title: 'STATE', width: 14 },
    ],
    0,
    'ORGANIZATION',
    10,
  )
  const { snapshot } = props
  return (
    <Table
      title="Quota"
      columns={columns}
      limit={props.limit}
      selected={props.selected}
      empty={
        snapshot.filter === null ? 'no organizations yet' : `no organization matches "${snapshot.filter}"`
      }
      rows={snapshot.quota.map((quota) => [
        quota.org,
        quota.plan,
        `${formatCount(quota.minute.used)}/${formatCount(quota.minute.limit)}`,
        bar(quota.month.used / quota.month.limit, barWidth),
        `${formatCount(quota.month.used)}/${formatCount(quota.month.limit)}`,
        formatCount(quota.rejected),
        quotaState(quota, snapshot.at),
      ])}
    />
  )
}

export function RecentErrors(props: TableProps & { showIds: boolean }) {
  const fixed: Column[] = [
    { title: 'TIME', width: 8 },
    { title: 'CODE', width: 4 },
    { title: 'METHOD', width: 6 },
    { title: 'ORG', width: 12 },
  ]
  if (props.showIds) fixed.push({ title: 'REQUEST ID', width: 36 })
  const columns = layout(props.width, fixed, 3, 'PATH')
  return (
    <Table
      title={`Recent errors (4xx, 5xx; last 15 min)`}
      columns={columns}
      limit={props.limit}
      selected={props.selected}
      empty="none in the last 15 minutes"
      rows={props.snapshot.recentErrors.map((error) => [
        formatClock(error.at),
        String(error.status),
        error.method,
        error.path,
        error.org ?? NO_KEY,
        error.requestId,
      ])}
    />
  )
}

export function Publishers(props: TableProps) {
  const { snapshot } = props
  const columns = layout(
    props.width,
    [
      { title: 'PUBLISHER', width: 16 },
      { title: 'ENABLED', width: 7 },
      { title: 'LAST SYNC', width: 12 },
      { title: 'SLOTS', width: 7, align: 'right' },
    ],
    4,
    'RESULT',
  )
  return (
    <Table
      title="Publishers"
      columns={columns}
      limit={props.limit}
      selected={props.selected}
      empty="no publishers (svc publishers add)"
      rows={snapshot.publishers.map((publisher) => [
        publisher.slug,
        publisher.enabled ? 'yes' : 'no',
        publisher.lastSyncAt
          ? `${formatDuration(Date.parse(snapshot.at) - Date.parse(publisher.lastSyncAt))} ago`
          : 'never',
        publisher.slotsHeld === null ? '-' : formatCount(publisher.slotsHeld),
        publisher.lastSyncResult ?? '-',
      ])}
    />
  )
}
