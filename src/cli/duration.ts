/** `5m`, `30s`, `1h`, `500ms` or a bare number of seconds; `0` turns the schedule off. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim())
  if (!match) return undefined
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
  return Number(match[1]) * unit
}
