/**
 * Arrays a search makes for thousands of series, sized up front: grown by push, an array is copied a dozen
 * times on the way (a third of what a search allocated). `new Array(length)` gives room for all at once up
 * to V8's limit for it; past that it makes a dictionary, so a longer one is grown.
 */
const MAX_SIZED = 100_000

/** An empty array with room for `length` elements, to be written in order from index 0. */
export function sized<T>(length: number): T[] {
  return length <= MAX_SIZED ? new Array<T>(length) : []
}

/** An array of `length` times `value`. */
export function filled(length: number, value: number): number[] {
  if (length <= MAX_SIZED) return new Array<number>(length).fill(value)
  const list: number[] = []
  for (let at = 0; at < length; at++) list.push(value)
  return list
}
