import type { Db } from '../../db/open.js'
import { SLOTS_BY_START } from '../schema.js'
import type { SeriesMask } from './series.js'

/**
 * The served slots of one part (one publisher's last sync), as what a search from now needs of them: how
 * many started before the moment and when the next one starts. The moment is the request's own, so it
 * moves by a little each time: the figures are kept and brought forward by counting only the slots whose
 * start it has passed since (none, mostly: then nothing is read). A search over every served series thus
 * costs a few additions per publisher instead of work per series.
 */

export interface Tally {
  moment: number
  /** Served slots of the status starting before `moment`. */
  before: number
  /** The start of the first served slot of the status at or after `moment`; null when none is left. */
  next: number | null
}

const MEMBER = `t.series_id BETWEEN @lo AND @hi AND substr(@members, t.series_id - @lo + 1, 1) = x'01'`
const partParams = ({ part, lo, hi, members }: SeriesMask) => ({ part, lo, hi, members })

/** Served slots of the status starting in [from, to). */
function countBetween(db: Db, served: SeriesMask, status: number, from: number, to: number): number {
  return db
    .statement(
      `SELECT count(*) FROM sched_slots t INDEXED BY ${SLOTS_BY_START}
     WHERE t.part = @part AND t.status = @status AND t.start_ms >= @from AND t.start_ms < @to AND ${MEMBER}`,
    )
    .pluck()
    .get({ ...partParams(served), status, from, to }) as number
}

function nextFrom(db: Db, served: SeriesMask, status: number, moment: number): number | null {
  const next = db
    .statement(
      `SELECT t.start_ms FROM sched_slots t INDEXED BY ${SLOTS_BY_START}
     WHERE t.part = @part AND t.status = @status AND t.start_ms >= @moment AND ${MEMBER}
     ORDER BY t.start_ms LIMIT 1`,
    )
    .pluck()
    .get({ ...partParams(served), status, moment }) as number | undefined
  return next ?? null
}

/** Before every stored slot: where a part's first tally counts from. */
const EARLIEST = Number.MIN_SAFE_INTEGER

/** The tally at `moment`, from the one kept at an earlier or later moment (or none: counted from the start). */
export function tallyAt(
  db: Db,
  served: SeriesMask,
  status: number,
  moment: number,
  kept: Tally | undefined,
): Tally {
  if (kept === undefined) {
    const before = countBetween(db, served, status, EARLIEST, moment)
    return { moment, before, next: nextFrom(db, served, status, moment) }
  }
  if (moment === kept.moment) return kept
  // No served slot starts in [kept.moment, moment): the same slots lie before, and the same one is next.
  if (moment > kept.moment && (kept.next === null || moment <= kept.next)) {
    return { moment, before: kept.before, next: kept.next }
  }
  const before =
    moment > kept.moment
      ? kept.before + countBetween(db, served, status, kept.moment, moment)
      : kept.before - countBetween(db, served, status, moment, kept.moment)
  return { moment, before, next: nextFrom(db, served, status, moment) }
}
