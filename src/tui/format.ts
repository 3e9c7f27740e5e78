/** Text helpers for `svc top`: every figure is shown the same way in the live screen and the snapshot. */

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-'
  if (ms < 10) return `${ms.toFixed(1)}ms`
  if (ms < 1000) return `${Math.round(ms)}ms`
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`
}

/** Counts in at most five characters: 999, 1.2k, 49.9k, 500k, 1.2M. */
export function formatCount(n: number): string {
  if (n < 1000) return String(n)
  if (n < 100_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`
}

export function formatRate(perSecond: number): string {
  return `${perSecond < 100 ? perSecond.toFixed(1) : Math.round(perSecond)}/s`
}

/** 9d 14h, 3h 05m, 12m, 40s: how long until an instant. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  const days = Math.floor(seconds / 86_400)
  const hours = Math.floor((seconds % 86_400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  if (days > 0) return `${days}d ${hours}h`
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`
  if (minutes > 0) return `${minutes}m`
  return `${seconds}s`
}

/** HH:MM:SS in UTC, the clock the limits count in. */
export const formatClock = (iso: string) => iso.slice(11, 19)

const SPARKS = '▁▂▃▄▅▆▇█'

/** The last `width` values as a sparkline scaled to their maximum; a zero stays a space. */
export function sparkline(values: readonly number[], width: number): string {
  const shown = values.slice(-Math.max(0, width))
  const max = Math.max(0, ...shown)
  return shown
    .map((value) =>
      value <= 0 || max === 0
        ? ' '
        : SPARKS[Math.min(SPARKS.length - 1, Math.floor((value / max) * SPARKS.length))],
    )
    .join('')
    .padStart(width)
}

/** A bar of `width` cells filled to `fraction` (capped at full). */
export function bar(fraction: number, width: number): string {
  const filled = Math.min(width, Math.round(Math.max(0, fraction) * width))
  return '█'.repeat(filled) + '░'.repeat(Math.max(0, width - filled))
}

/** Cuts text to `width` characters, marking the cut. */
export function fit(text: string, width: number): string {
  if (width <= 0) return ''
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`
}

export interface Column {
  title: string
  width: number
  align?: 'left' | 'right'
}

/** One line of a fixed-width table; the cells are cut or padded to their column. */
export function row(columns: readonly Column[], cells: readonly string[]): string {
  return columns
    .map((column, index) => {
      const cell = cells[index] ?? ''
      if (column.align === 'right')
        return cell.length > column.width ? fit(cell, column.width) : cell.padStart(column.width)
      return fit(cell, column.width)
    })
    .join(' ')
    .trimEnd()
}

export const heading = (columns: readonly Column[]) =>
  row(
    columns,
    columns.map((column) => column.title),
  )
