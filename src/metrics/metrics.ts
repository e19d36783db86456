import { collectDefaultMetrics, Registry } from 'prom-client'
import { type Argon2Metrics, createArgon2Metrics } from './argon2-metrics.js'
import { answerMetricsRequests } from './cluster-metrics.js'
import { type ConnectionMetrics, createConnectionMetrics } from './connection-metrics.js'
import { createMailMetrics, type MailMetrics } from './mail-metrics.js'
import { type MetricsListen, type MetricsLog, startMetricsServer } from './metrics-server.js'
import { createMfaMetrics, type MfaMetrics } from './mfa-metrics.js'
import { createProviderMetrics, type ProviderMetrics } from './provider-metrics.js'
import { createRequestMetrics, type RequestMetrics } from './request-metrics.js'
import { createSessionMetrics, type SessionMetrics } from './session-metrics.js'
import { createStoreMetrics, type StoreMetrics } from './store-metrics.js'
import { createWebhookMetrics, type WebhookMetrics } from './webhook-metrics.js'

/** What serves one process's metrics: its own server (`url`), or, in a worker, its answers to the primary. */
export interface MetricsExposure {
  /** `http://host:port/metrics`; null in a worker of WORKERS > 1, whose primary serves the sum. */
  readonly url: string | null
  close(): Promise<void>
}

/** Everything one process counts for GET /metrics (METRICS_PORT), in one registry of its own. */
export interface Metrics {
  readonly registry: Registry
  readonly requests: RequestMetrics
  readonly stores: StoreMetrics
  readonly argon2: Argon2Metrics
  readonly connections: ConnectionMetrics
  readonly sessions: SessionMetrics
  /** Mail and e-mail codes: the mail domain's observer, the outbox's gauges, codes sent and refused. */
  readonly mail: MailMetrics
  /** Provider sign-ins by provider and outcome (docs/api.md §4.24). */
  readonly providers: ProviderMetrics
  /** Second steps by outcome (docs/api.md §4.25). */
  readonly mfa: MfaMetrics
  /** Webhook events by URL position: queued, delivered, failed, dropped, and the outbox's webhook lane (§6.5). */
  readonly webhooks: WebhookMetrics
  /**
   * Serves the metrics on `listen`, or in a worker of WORKERS > 1 answers the primary instead, which serves the sum
   * over its workers (src/cluster.ts). Rejects with a ConfigError naming METRICS_PORT when it cannot listen.
   */
  expose(listen: MetricsListen, options: { inWorker: boolean; log: MetricsLog }): Promise<MetricsExposure>
}

/**
 * The metrics of docs/api.md "Metrics": requests, logins, refreshes and rate-limit refusals; the Argon2 queue; store
 * calls; connections and the answers given before any route; and prom-client's default process metrics (memory, CPU, event-loop lag, garbage collection), under their
 * usual names. A registry of its own, not prom-client's global one, so that each service made in one process (the
 * tests make many) counts for itself.
 */
export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    requests: createRequestMetrics(registry),
    stores: createStoreMetrics(registry),
    argon2: createArgon2Metrics(registry),
    connections: createConnectionMetrics(registry),
    sessions: createSessionMetrics(registry),
    mail: createMailMetrics(registry),
    providers: createProviderMetrics(registry),
    mfa: createMfaMetrics(registry),
    webhooks: createWebhookMetrics(registry),
    async expose(listen, options) {
      if (options.inWorker) {
        const stop = answerMetricsRequests(registry)
        return { url: null, close: async () => stop() }
      }
      const render = async () => ({ contentType: registry.contentType, body: await registry.metrics() })
      return startMetricsServer(listen, render, options.log)
    },
  }
}
