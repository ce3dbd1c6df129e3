// autocannon ships no types; this covers only the parts the bench uses.
declare module 'autocannon' {
  export interface Options {
    url: string
    connections?: number
    /** Seconds. */
    duration?: number
    /** A number of requests to send, instead of a duration. */
    amount?: number
    method?: 'GET' | 'POST'
    headers?: Record<string, string>
    body?: string
  }

  export interface Histogram {
    average: number
    p50: number
    p99: number
    max: number
    total: number
  }

  export interface Result {
    /** Requests completed per second, sampled once a second. */
    requests: Histogram
    /** Milliseconds. */
    latency: Histogram
    /** Seconds. */
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    statusCodeStats: Record<string, { count: number }>
  }

  /** Without a callback the returned instance is also a promise of the result. */
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
