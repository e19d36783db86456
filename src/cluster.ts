import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'

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
 * `forwardSighup` (TLS), a SIGHUP is passed on to every worker, each of which re-reads its certificate. Resolves with
 * the exit code once no worker is left.
 */
export function runPrimary(
  workers: number,
  logger: Logger,
  options: { forwardSighup: boolean } = { forwardSighup: false },
): Promise<number> {
  return new Promise((resolve) => {
    const listening = new Set<Worker>()
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
          logger.info(
            { url, store, workers },
            `tessera listening on ${url} (store: ${store}, ${workers} workers)`,
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
}
