import { randomUUID } from 'node:crypto'

/** The texts of the RawJson met while `stringify` serializes a body, in order; undefined outside it. */
let spliced: string[] | undefined
/**
 * What a RawJson serializes as inside `stringify`, to be replaced by its text: a string no JSON.stringify of
 * other data gives but by chance (a private-use character around a random UUID, new in every process).
 */
const MARK = `\uE000${randomUUID()}\uE000`
const MARKED = JSON.stringify(MARK)

/**
 * A value kept as the JSON text it was stored as (a location or provider summary of a scheduling group),
 * spliced into a body's text as it is by `stringify`: a page of 50 groups parsed a hundred summaries to
 * serialize them again, a sixth of its search. Anywhere else it serializes as its parsed value. The text must
 * be what JSON.stringify gives for that value.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    if (spliced === undefined) return JSON.parse(this.text)
    spliced.push(this.text)
    return MARK
  }
}

/** JSON.stringify, with each RawJson in `value` spliced in as its text. */
export function stringify(value: unknown): string {
  const texts: string[] = []
  const outer = spliced
  spliced = texts
  let text: string
  try {
    text = JSON.stringify(value)
  } finally {
    spliced = outer
  }
  if (texts.length === 0) return text
  const pieces = text.split(MARKED)
  let joined = pieces[0] as string
  for (let at = 1; at < pieces.length; at++) joined += (texts[at - 1] as string) + (pieces[at] as string)
  return joined
}
