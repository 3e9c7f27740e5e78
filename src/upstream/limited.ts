/** Upstream requests one call may have open at once (issue: bounded effort per call). */
export const CALL_CONCURRENCY = 4

/**
 * `work` over every item, at most `limit` at a time, results in the items' order. The first failure
 * rejects at once; work already started runs out, and nothing more starts.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  let failed = false
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        results[index] = await work(items[index] as T, index)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return results
}
