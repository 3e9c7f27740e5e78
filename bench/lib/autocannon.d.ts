// autocannon ships no types and @types/autocannon is not a dependency; this covers only what bench/ uses.
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    duration?: number
    headers?: Record<string, string>
    /** Runs the load generator in worker threads instead of on the caller's event loop. */
    workers?: number
  }
  interface Histogram {
    mean: number
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
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
