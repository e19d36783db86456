import { Gauge, type Registry } from 'prom-client'
import type { ConnectionGuard } from '../http/connection-guard.js'
import { registerCollected } from './collected-metric.js'

/**
 * What the connection limits did (docs/api.md R8.7, R8.8) and the answers given before any route (R1.13): what a
 * flood of connections, of pipelined requests or of malformed ones shows of itself.
 */
export interface ConnectionMetrics {
  /** The connection guard whose counts the metrics report at each scrape. */
  watch(guard: Pick<ConnectionGuard, 'stats'>): void
  /**
   * Counts an answer given without a route: Node's parser refused the request (400, 408, 413, 431), or the
   * connection guard did (400 without Host, 417, 503 over a connection's limits).
   */
  answeredBeforeRouting(status: number): void
}

/** The label of each way the guard closes a connection, and the count of ConnectionStats it reads. */
const CLOSED_BY = [
  ['shed', 'shed'],
  ['refused', 'refused'],
  ['overloaded', 'overloaded'],
  ['write_timeout', 'writeTimeouts'],
] as const

/**
 * docs/api.md R6.2.7: `tessera_connections_open`, `tessera_connections_closed_total` by reason and
 * `tessera_http_refused_before_routing_total` by status. The guard keeps its own counts, read at scrape time; an
 * answer before routing costs a map update.
 */
export function createConnectionMetrics(registry: Registry): ConnectionMetrics {
  let stats: ConnectionGuard['stats'] | null = null
  const beforeRouting = new Map<number, number>()
  new Gauge({
    name: 'tessera_connections_open',
    help: 'Connections to the API open now',
    registers: [registry],
    collect() {
      this.set(stats?.().open ?? 0)
    },
  })
  registerCollected(registry, {
    name: 'tessera_connections_closed_total',
    help: 'Connections the service closed to stay within its limits, by reason: shed (idle, to make room), refused (new, every slot busy), overloaded (too many pipelined requests or unread answers), write_timeout (the client read nothing)',
    type: 'counter',
    collect: () => {
      const now = stats?.()
      return CLOSED_BY.map(([reason, count]) => ({ labels: { reason }, value: now?.[count] ?? 0 }))
    },
  })
  registerCollected(registry, {
    name: 'tessera_http_refused_before_routing_total',
    help: "Requests answered before any route, by status: refused by Node's HTTP parser (400, 408, 413, 431) or by the connection limits (400, 417, 503)",
    type: 'counter',
    collect: () => [...beforeRouting].map(([status, value]) => ({ labels: { status }, value })),
  })
  return {
    watch(guard) {
      stats = () => guard.stats()
    },
    answeredBeforeRouting(status) {
      beforeRouting.set(status, (beforeRouting.get(status) ?? 0) + 1)
    },
  }
}
