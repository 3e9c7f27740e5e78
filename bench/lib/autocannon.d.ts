// autocannon ships no types and @types/autocannon is not a dependency; this covers only what bench/ uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string
      path: string
      headers?: Record<string, string>
    }
    interface Options {
      url: string
      connections?: number
      duration?: number
      headers?: Record<string, string>
      /** Sent in turn by every connection, in place of one request to `url`. */
      requests?: Request[]
      /** Runs the load generator in worker threads instead of on the caller's event loop. */
      workers?: number
    }
    interface Histogram {
      mean: number
      min: number
      max: number
      p50: number
      p99: number
    }
    interface Result {
      requests: Histogram
      latency: Histogram
      non2xx: number
      errors: number
      timeouts: number
    }
    interface Tracker {
      /** Ends the run early; the callback then gets the result so far. */
      stop(): void
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>
  function autocannon(
    options: autocannon.Options,
    done: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Tracker
  export default autocannon
}
