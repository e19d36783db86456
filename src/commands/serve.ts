import cluster from 'node:cluster'
import type { AddressInfo } from 'node:net'
import type { Server as TlsServer } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { systemClock } from '../clock.js'
import { reportListening, runPrimary } from '../cluster.js'
import { signingSecret } from '../config/dev-secret.js'
import type { TlsFiles } from '../config/server-config.js'
import { type Config, configWarnings, type Env } from '../config.js'
import { describeCertificate, readTlsMaterial } from '../http/tls.js'
import { createLogger } from '../logger.js'
import { createService, loadSiteConfig, type Service } from '../server.js'
import { migrateDatabase } from '../storage/open-stores.js'
import { exitWithError, loadConfigOrExit } from './exit.js'

/** How long SIGTERM waits for in-flight requests before giving up. */
const SHUTDOWN_DEADLINE_MS = 30_000

/** How long after the port opens the service's background work starts (Service.start). */
const BACKGROUND_START_DELAY_MS = 1_000

/** `tessera serve`: start, log one line, and on SIGTERM/SIGINT finish in-flight requests, close, exit 0. */
export async function serve(env: Env): Promise<void> {
  const config = loadConfigOrExit(env)
  const logger = createLogger(config.logLevel)
  if (cluster.isPrimary && config.server.workers > 1) {
    process.exit(await startWorkers(config, logger))
  }
  if (cluster.isPrimary) for (const warning of configWarnings(config)) logger.warn(warning)
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'))

  try {
    const service = await createService(config, { logger, jwtSecret: await signingSecret(config) })
    // before listening: a signal that arrives as soon as the port is open must already find its handler
    stopOnSignals(service, logger)
    if (config.server.tls !== null) reloadCertificateOnSighup(service, config.server.tls, logger)
    await listen(service.app, config.server.host, config.server.port)
    // the work that can wait (Service.start: the Argon2 threads, the senders, the pruner) starts a moment after the
    // port opens, so that the first requests (a readiness probe, a rolling deploy's first users) are not served beside
    // the threads booting: the first GET /health came some 20 ms sooner, about 6 % of a cold start
    // (docs/performance.md, issue 34). A login meanwhile starts the Argon2 threads itself.
    setTimeout(() => service.start(), BACKGROUND_START_DELAY_MS).unref()
    const address = service.app.server.address() as AddressInfo
    const scheme = config.server.tls === null ? 'http' : 'https'
    const url = `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
    const store = service.stores.description
    const { metricsUrl } = service
    const metricsNote = metricsUrl === null ? '' : `, metrics on ${metricsUrl}`
    if (cluster.isWorker) reportListening(url, store)
    else
      logger.info(
        { url, store, ...(metricsUrl === null ? {} : { metricsUrl }) },
        `tessera listening on ${url} (store: ${store}${metricsNote})`,
      )
  } catch (error) {
    exitWithError(error)
  }
}

/**
 * The primary of WORKERS > 1: prepares what the workers share (the development secret and signing key, the migrated
 * schema) so they do not race for it, then runs them. Resolves with the exit code.
 */
async function startWorkers(config: Config, logger: Logger): Promise<number> {
  for (const warning of configWarnings(config)) logger.warn(warning)
  try {
    await loadSiteConfig(config)
    if (config.server.tls !== null) await readTlsMaterial(config.server.tls)
    await signingSecret(config)
    // the development key pair is made here once, and a bad key file stops the start before any worker does
    if (config.signing.algorithm !== 'HS256') {
      await (await import('../auth/access-token-keys.js')).loadAccessTokenKeys(config)
    }
    await migrateDatabase(config.storage, systemClock)
  } catch (error) {
    exitWithError(error)
  }
  try {
    // with TLS, SIGHUP goes on to every worker, which re-reads the certificate (it would stop them otherwise)
    return await runPrimary(config.server.workers, logger, {
      forwardSighup: config.server.tls !== null,
      metrics: config.server.metrics,
    })
  } catch (error) {
    exitWithError(error)
  }
}

/** SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the stores, exit 0. */
function stopOnSignals(service: Service, logger: Logger): void {
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
    setTimeout(() => {
      logger.error(`in-flight requests did not finish within ${SHUTDOWN_DEADLINE_MS} ms; exiting`)
      process.exit(1)
    }, SHUTDOWN_DEADLINE_MS).unref()
    try {
      await service.close()
      logger.info('stopped')
      process.exit(0)
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
}

/**
 * SIGHUP: TLS_CERT_FILE and TLS_KEY_FILE are read again and serve every new connection, so a renewed certificate
 * needs no restart (connections already open keep the one they started with). A pair that cannot be used is logged
 * and the current one kept.
 */
function reloadCertificateOnSighup(service: Service, files: TlsFiles, logger: Logger): void {
  const server = service.app.server as unknown as Pick<TlsServer, 'setSecureContext'>
  process.on('SIGHUP', () => {
    readTlsMaterial(files).then(
      (material) => {
        server.setSecureContext(material)
        logger.info({ certificate: describeCertificate(material.cert) }, 'TLS certificate reloaded')
      },
      (error: unknown) =>
        logger.error({ err: error }, 'TLS certificate not reloaded: the current one is still served'),
    )
  })
}

/** Listens on the app's own server, so that the one start-up line above is the only one. */
function listen(app: FastifyInstance, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    app.server.once('error', reject)
    app.server.listen({ host, port }, () => {
      app.server.off('error', reject)
      resolve()
    })
  })
}
