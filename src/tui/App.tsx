import { Box, Text, useApp, useInput, useStdout } from 'ink'
import { isDeepStrictEqual } from 'node:util'
import { useEffect, useRef, useState } from 'react'
import type { TopSnapshot } from '../stats/topSnapshot.js'
import { fit, formatDuration } from './format.js'
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

export const VIEWS = ['Overview', 'Quota', 'Errors', 'Publishers'] as const
type View = (typeof VIEWS)[number]

export interface Size {
  columns: number
  rows: number
}

export interface AppProps {
  database: string
  /** A fresh snapshot for the organization filter (part of a slug, or null for all). */
  load: (filter: string | null) => TopSnapshot
  intervalMs: number
  /** Fixed size instead of the terminal's (tests). */
  size?: Size
}

function useTerminalSize(fixed: Size | undefined): Size {
  const { stdout } = useStdout()
  const read = () => fixed ?? { columns: stdout.columns || 80, rows: stdout.rows || 24 }
  const [size, setSize] = useState(read)
  useEffect(() => {
    if (fixed) return
    const onResize = () => setSize(read())
    stdout.on('resize', onResize)
    return () => {
      stdout.off('resize', onResize)
    }
  })
  return size
}

/** Splits `total` lines among lists wanting `wants` lines: no list gets more than it wants, spare goes on. */
export function allocate(total: number, wants: readonly number[]): number[] {
  const given = wants.map(() => 0)
  let left = Math.max(0, total)
  let open = wants.map((_, index) => index)
  while (left > 0 && open.length > 0) {
    const share = Math.max(1, Math.floor(left / open.length))
    for (const index of open) {
      const take = Math.min(share, (wants[index] ?? 0) - (given[index] ?? 0), left)
      given[index] = (given[index] ?? 0) + take
      left -= take
    }
    open = open.filter((index) => (given[index] ?? 0) < (wants[index] ?? 0))
  }
  return given
}

/** The rows of a view that arrow keys move through. */
function selectable(snapshot: TopSnapshot, view: View): number {
  if (view === 'Overview') return snapshot.topOrgs.length
  if (view === 'Quota') return snapshot.quota.length
  if (view === 'Errors') return snapshot.recentErrors.length
  return snapshot.publishers.length
}

/** The organization of the selected row, for `enter` to filter on. */
function selectedOrg(snapshot: TopSnapshot, view: View, selected: number): string | null {
  if (view === 'Overview') return snapshot.topOrgs[selected]?.org ?? null
  if (view === 'Quota') return snapshot.quota[selected]?.org ?? null
  if (view === 'Errors') return snapshot.recentErrors[selected]?.org ?? null
  return null
}

export function App(props: AppProps) {
  const { exit } = useApp()
  const size = useTerminalSize(props.size)
  const [filter, setFilter] = useState<string | null>(null)
  /** What is being typed after `/`; null when not typing. */
  const [draft, setDraft] = useState<string | null>(null)
  const [view, setView] = useState<View>('Overview')
  const [selected, setSelected] = useState(0)
  const [snapshot, setSnapshot] = useState(() => props.load(null))

  useEffect(() => {
    const refresh = () => {
      const next = props.load(filter)
      // The same figures again (an idle server) keep the old object, so React skips the render and Ink
      // writes nothing.
      setSnapshot((shown) => (isDeepStrictEqual(shown, next) ? shown : next))
    }
    const timer = setInterval(refresh, props.intervalMs)
    return () => clearInterval(timer)
  }, [filter, props.load, props.intervalMs])

  const rowCount = selectable(snapshot, view)
  // Keys can arrive before React re-subscribes the handler after a render: it reads the latest state here.
  const latest = useRef({ draft, filter, view, selected, snapshot, rowCount })
  latest.current = { draft, filter, view, selected, snapshot, rowCount }

  const applyFilter = (next: string | null) => {
    latest.current.filter = next
    setFilter(next)
    setSelected(0)
    setSnapshot(props.load(next))
  }
  const switchView = (step: number) => {
    const next = VIEWS[(VIEWS.indexOf(latest.current.view) + step + VIEWS.length) % VIEWS.length] as View
    latest.current.view = next
    latest.current.selected = 0
    setView(next)
    setSelected(0)
  }
  const select = (index: number) => {
    latest.current.selected = index
    setSelected(index)
  }
  const typeFilter = (text: string | null) => {
    latest.current.draft = text
    setDraft(text)
  }

  useInput((input, key) => {
    const state = latest.current
    if (state.draft !== null) {
      if (key.return) {
        const typed = state.draft.trim()
        typeFilter(null)
        applyFilter(typed === '' ? null : typed)
      } else if (key.escape) typeFilter(null)
      else if (key.backspace || key.delete) typeFilter(state.draft.slice(0, -1))
      else if (input && !key.ctrl && !key.meta && !key.tab) typeFilter(state.draft + input)
      return
    }
    if (input === 'q') exit()
    else if (input === '/') typeFilter(state.filter ?? '')
    else if (key.tab) switchView(key.shift ? -1 : 1)
    else if (key.rightArrow) switchView(1)
    else if (key.leftArrow) switchView(-1)
    else if (key.downArrow) select(Math.min(Math.max(0, state.rowCount - 1), state.selected + 1))
    else if (key.upArrow) select(Math.max(0, state.selected - 1))
    else if (key.escape && state.filter !== null) applyFilter(null)
    else if (key.return) {
      const org = selectedOrg(state.snapshot, state.view, state.selected)
      if (org !== null) applyFilter(org)
    }
  })

  const { columns, rows } = size
  // One line short of the terminal: a frame as tall as the screen makes Ink clear it on every refresh.
  const body = Math.max(4, rows - 4)
  const current = Math.min(selected, Math.max(0, rowCount - 1))
  return (
    <Box flexDirection="column" width={columns}>
      <Header snapshot={snapshot} database={props.database} width={columns} />
      <Text wrap="truncate-end">
        {VIEWS.map((name) => (
          <Text key={name} inverse={name === view} bold={name === view}>{` ${name} `}</Text>
        ))}
      </Text>
      <Box flexDirection="column" height={body} overflow="hidden">
        {snapshot.state === 'waiting' ? (
          <Waiting database={props.database} problem={snapshot.problem} />
        ) : (
          <ViewBody view={view} snapshot={snapshot} columns={columns} lines={body} selected={current} />
        )}
      </Box>
      <Text wrap="truncate-end" dimColor={draft === null}>
        {fit(
          draft !== null
            ? `/ organization: ${draft}_   enter apply · esc cancel`
            : `q quit · tab view · ↑↓ select · enter only this org · / filter${filter === null ? '' : ' · esc all orgs'}`,
          columns,
        )}
      </Text>
    </Box>
  )
}

function Waiting(props: { database: string; problem: string | undefined }) {
  if (props.problem) {
    return (
      <Box flexDirection="column" paddingTop={1}>
        <Text wrap="wrap">{`Cannot read ${props.database}: ${props.problem}.`}</Text>
        <Text wrap="wrap" dimColor>
          This screen tries again every refresh, and fills in once the file is an svc database.
        </Text>
      </Box>
    )
  }
  return (
    <Box flexDirection="column" paddingTop={1}>
      <Text wrap="wrap">{`Waiting for ${props.database}: there is no database there yet.`}</Text>
      <Text wrap="wrap" dimColor>
        Start `svc serve` with the same --db and this screen fills in; `svc top` only reads, so it never
        creates the file.
      </Text>
    </Box>
  )
}

const exact = (n: number) => n.toLocaleString('en-US')

/** The selected organization's figures in full, and what refuses it. */
function QuotaDetail(props: { quota: TopSnapshot['quota'][number]; at: string; width: number }) {
  const { quota, width } = props
  const refusal =
    quota.limited === 'month' && quota.resetsAt
      ? `month allowance used: refused until ${quota.resetsAt.slice(0, 16).replace('T', ' ')} UTC, in ${formatDuration(Date.parse(quota.resetsAt) - Date.parse(props.at))}`
      : quota.limited === 'minute'
        ? 'minute limit reached: refused until the next minute'
        : null
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end" color="cyan">
        {fit(
          `${quota.name} (${quota.org}), ${quota.plan}: ${exact(quota.minute.used)} of ${exact(quota.minute.limit)} this minute, ${exact(quota.month.used)} of ${exact(quota.month.limit)} this month`,
          width,
        )}
      </Text>
      {refusal ? <Text color="cyan">{fit(refusal, width)}</Text> : null}
    </Box>
  )
}

function ViewBody(props: {
  view: View
  snapshot: TopSnapshot
  columns: number
  lines: number
  selected: number
}) {
  const { view, snapshot, columns, lines, selected } = props
  if (view === 'Quota') {
    const quota = snapshot.quota[selected]
    return (
      <>
        <Quota snapshot={snapshot} width={columns} limit={lines - 4} selected={selected} />
        {quota ? <QuotaDetail quota={quota} at={snapshot.at} width={columns} /> : null}
      </>
    )
  }
  if (view === 'Errors') {
    const error = snapshot.recentErrors[selected]
    return (
      <>
        <RecentErrors
          snapshot={snapshot}
          width={columns}
          limit={lines - 3}
          selected={selected}
          showIds={columns >= WIDE}
        />
        {error ? (
          <Text wrap="truncate-end" color="cyan">
            {fit(`svc requests show ${error.requestId}`, columns)}
          </Text>
        ) : null}
      </>
    )
  }
  if (view === 'Publishers') {
    return <Publishers snapshot={snapshot} width={columns} limit={lines - 2} selected={selected} />
  }
  // Overview: traffic (2 lines), then three lists of a title and a heading line each.
  const wide = columns >= WIDE
  const wants = [snapshot.latency.groups.length, snapshot.topEndpoints.length, snapshot.topOrgs.length].map(
    (count) => Math.max(1, count),
  )
  const free = lines - 2 - (wide ? 4 : 6)
  const [groups = 1, endpoints = 1, orgs = 1] = wide
    ? (() => {
        const [first = 1, second = 1] = allocate(free, [
          wants[0] ?? 1,
          Math.max(wants[1] ?? 1, wants[2] ?? 1),
        ])
        return [first, second, second]
      })()
    : allocate(free, wants)
  const half = Math.floor((columns - 2) / 2)
  return (
    <>
      <Traffic snapshot={snapshot} width={columns} />
      <LatencyGroups snapshot={snapshot} width={columns} limit={groups} />
      {wide ? (
        <Box>
          <Box width={half} marginRight={2}>
            <TopEndpoints snapshot={snapshot} width={half} limit={endpoints} />
          </Box>
          <TopOrgs snapshot={snapshot} width={columns - half - 2} limit={orgs} selected={selected} />
        </Box>
      ) : (
        <>
          <TopEndpoints snapshot={snapshot} width={columns} limit={endpoints} />
          <TopOrgs snapshot={snapshot} width={columns} limit={orgs} selected={selected} />
        </>
      )}
    </>
  )
}
