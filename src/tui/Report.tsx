import { Box, renderToString, Text } from 'ink'
import type { TopSnapshot } from '../stats/topSnapshot.js'
import {
  Header,
  LatencyGroups,
  Publishers,
  Quota,
  RecentErrors,
  TopEndpoints,
  TopOrgs,
  Traffic,
  WIDE,
} from './panels.js'

const ALL = Number.MAX_SAFE_INTEGER

/** Every panel, one under the other and in full: what `svc top --once` and a non-TTY print. */
function Report(props: { snapshot: TopSnapshot; database: string; width: number }) {
  const { snapshot, width } = props
  if (snapshot.state === 'waiting') {
    return (
      <Text>
        {snapshot.problem
          ? `svc top: cannot read the database at ${props.database}: ${snapshot.problem}.`
          : `svc top: no database at ${props.database} yet; start \`svc serve\` with the same --db.`}
      </Text>
    )
  }
  const panel = { snapshot, width, limit: ALL }
  return (
    <Box flexDirection="column" width={width} gap={1}>
      <Box flexDirection="column">
        <Header snapshot={snapshot} database={props.database} width={width} />
        <Traffic snapshot={snapshot} width={width} />
      </Box>
      <LatencyGroups {...panel} />
      <TopEndpoints {...panel} />
      <TopOrgs {...panel} />
      <Quota {...panel} />
      <RecentErrors {...panel} showIds={width >= WIDE} />
      <Publishers {...panel} />
    </Box>
  )
}

export function snapshotText(snapshot: TopSnapshot, database: string, width: number): string {
  return renderToString(<Report snapshot={snapshot} database={database} width={width} />, { columns: width })
}
