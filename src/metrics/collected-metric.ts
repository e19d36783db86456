import type { Metric, Registry } from 'prom-client'

/** Label values of one series. */
export type Labels = Readonly<Record<string, string | number>>

/** One line of a metric, as prom-client's registry and its cluster aggregation read it. */
export interface MetricValue {
  labels: Labels
  value: number
  /** The line's own name where it differs from the metric's (a histogram's `_bucket`, `_sum`, `_count`). */
  metricName?: string
}

/**
 * Upper bounds, in seconds, of the latency buckets of HTTP requests and store calls: from 0.1 ms (an SQLite read) to
 * 10 s (past STORAGE_TIMEOUT_MS's default).
 */
export const LATENCY_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]

/**
 * The observations of one histogram series: plain numbers added on the hot path, turned into Prometheus lines only
 * when scraped. prom-client's own labelled histogram validates and hashes the labels on every observation (about
 * 0.7 µs a request with its counter, measured here); this costs a few nanoseconds.
 */
export class LatencySeries {
  count = 0
  sum = 0
  /** Observations per bucket, not cumulative; the last one is above every bound. */
  readonly perBucket: Float64Array

  constructor(readonly bounds: readonly number[] = LATENCY_BUCKETS) {
    this.perBucket = new Float64Array(bounds.length + 1)
  }

  observe(seconds: number): void {
    this.count++
    this.sum += seconds
    const { bounds } = this
    let bucket = 0
    while (bucket < bounds.length && seconds > (bounds[bucket] as number)) bucket++
    this.perBucket[bucket] = (this.perBucket[bucket] as number) + 1
  }

  /** The series as Prometheus histogram lines of `name` with `labels`: cumulative buckets, `+Inf`, sum and count. */
  values(name: string, labels: Labels): MetricValue[] {
    const bucketName = `${name}_bucket`
    let cumulative = 0
    const values: MetricValue[] = this.bounds.map((bound, i) => {
      cumulative += this.perBucket[i] as number
      return { metricName: bucketName, labels: { ...labels, le: bound }, value: cumulative }
    })
    values.push(
      { metricName: bucketName, labels: { ...labels, le: '+Inf' }, value: this.count },
      { metricName: `${name}_sum`, labels, value: this.sum },
      { metricName: `${name}_count`, labels, value: this.count },
    )
    return values
  }
}

/**
 * Registers a metric whose lines `collect` computes at each scrape from counts kept elsewhere. prom-client's registry
 * and its cluster aggregation need only what is here (name, help, type, how workers' values combine, and `get()`),
 * so such a metric is rendered and summed over workers like prom-client's own.
 */
export function registerCollected(
  registry: Registry,
  metric: { name: string; help: string; type: 'counter' | 'histogram'; collect: () => MetricValue[] },
): void {
  const { name, help, type, collect } = metric
  const collected = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: collect() }),
    // the counts belong to the request and store meters, which never start again from zero while serving
    reset() {},
  }
  registry.registerMetric(collected as unknown as Metric)
}
