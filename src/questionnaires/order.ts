/** What orders the versions of one canonical, as questionnaire_held keeps it. */
export interface HeldOrder {
  rid: number
  url: string | null
  version: string | null
  /** active 0, draft 1, retired 2, unknown 3. */
  statusRank: number
  date: string | null
  origin: string
  etag: string | null
  lastModified: string | null
}

/**
 * Versions compared part by part at the dots: two numeric parts as numbers, otherwise as text; a version
 * that runs out of parts first is the lower (1.2 < 1.2.1); no version is lowest.
 */
export function compareVersions(a: string | null, b: string | null): number {
  if (a === b) return 0
  if (a === null) return -1
  if (b === null) return 1
  const left = a.split('.')
  const right = b.split('.')
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const x = left[index]
    const y = right[index]
    if (x === undefined) return -1
    if (y === undefined) return 1
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y)
    const order = numeric ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0
    if (order !== 0) return order
  }
  return 0
}

/**
 * The current version first: active before draft before retired (before unknown), then the highest
 * version, then the most recently published (`date`), then the one held last.
 */
export function currentFirst(a: HeldOrder, b: HeldOrder): number {
  return (
    a.statusRank - b.statusRank ||
    compareVersions(b.version, a.version) ||
    (b.date ?? '').localeCompare(a.date ?? '') ||
    b.rid - a.rid
  )
}
