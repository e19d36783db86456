import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'
import type { MetricsListen, MetricsServer } from './metrics/metrics-server.js'

/** What a worker tells the primary once its server listens. */
export interface ListeningMessage {
  type: 'tessera:listening'
  url: string
  store: string
}

const isListeningMessage = (message: unknown): message is ListeningMessage =>
  (message as ListeningMessage | null)?.type === 'tessera:listening'

/** In a worker: tells the primary where it listens. */
export function reportListening(url: string, store: string): void {
  const message: ListeningMessage = { type: 'tessera:listening', url, store }
  process.send?.(message)
}

/**
 * WORKERS > 1: the primary forks the workers, which share one port (node:cluster), logs the one start-up line when
 * all of them listen, and replaces a worker that dies. A worker that dies before it listens is a failed start: the
 * others are stopped too. On SIGTERM/SIGINT it asks every worker to finish its requests and stop. With
 * `forwardSighup` (TLS), a SIGHUP is passed on to every worker, each of which re-reads its certificate. With
 * `metrics` (METRICS_PORT), it serves GET /metrics there, the sum over the workers that listen (docs/api.md
 * "Metrics"); the workers serve none of their own. Resolves with the exit code once no worker is left; rejects with a
 * ConfigError when the metrics port cannot be listened on, before any worker is started.
 */
export async function runPrimary(
  workers: number,
  logger: Logger,
  options: { forwardSighup: boolean; metrics?: MetricsListen | null } = { forwardSighup: false },
): Promise<number> {
  const listening = new Set<Worker>()
  const metrics = options.metrics ? await serveClusterMetrics(options.metrics, () => listening, logger) : null
  const code = await new Promise<number>((resolve) => {
    const alive = new Set<Worker>()
    let announced = false
    let stopping = false
    let exitCode = 0

    const fork = () => {
      const worker = cluster.fork()
      alive.add(worker)
      worker.on('message', (message: unknown) => {
        if (!isListeningMessage(message)) return
        listening.add(worker)
        if (!announced && listening.size === workers) {
          announced = true
          const { url, store } = message
          const metricsUrl = metrics === null ? {} : { metricsUrl: metrics.url }
          logger.info(
            { url, store, workers, ...metricsUrl },
            `tessera listening on ${url} (store: ${store}, ${workers} workers${metrics === null ? '' : `, metrics on ${metrics.url}`})`,
          )
        }
      })
    }

    const stopAll = (code: number) => {
      stopping = true
      exitCode = Math.max(exitCode, code)
      for (const worker of alive) worker.process.kill('SIGTERM')
      if (alive.size === 0) resolve(exitCode)
    }

    cluster.on('exit', (worker, code, signal) => {
      alive.delete(worker)
      const hadStarted = listening.delete(worker)
      if (stopping) {
        if (alive.size === 0) resolve(exitCode)
      } else if (!hadStarted) {
        logger.error({ workerPid: worker.process.pid, code, signal }, 'a worker failed to start; stopping')
        stopAll(1)
      } else {
        logger.error({ workerPid: worker.process.pid, code, signal }, 'a worker died; starting a replacement')
        fork()
      }
    })

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'shutting down: workers finish their in-flight requests')
        stopAll(0)
      })
    }
    if (options.forwardSighup) {
      process.on('SIGHUP', () => {
        // only to workers that listen: they handle it; one still starting reads the files anyway, and would die of it
        logger.info({ workers: listening.size }, 'SIGHUP: the workers reload the TLS certificate')
        for (const worker of listening) worker.process.kill('SIGHUP')
      })
    }
    for (let i = 0; i < workers; i++) fork()
  })
  await metrics?.close()
  return code
}

/** GET /metrics of the primary: prom-client loaded only when METRICS_PORT asks for it. */
async function serveClusterMetrics(
  listen: MetricsListen,
  workers: () => Iterable<Worker>,
  logger: Logger,
): Promise<MetricsServer> {
  const { startMetricsServer } = await import('./metrics/metrics-server.js')
  const { createClusterMetrics } = await import('./metrics/cluster-metrics.js')
  return startMetricsServer(listen, createClusterMetrics(workers), logger)
}
