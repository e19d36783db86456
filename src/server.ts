import cluster from 'node:cluster'
import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Server as TlsServer } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import { type AuditSink, createAuditSink } from './audit/audit-sink.js'
import { createAccountService } from './auth/account-service.js'
import { createArgon2Threads } from './auth/argon2-threads.js'
import { createConcurrencyLimiter } from './auth/concurrency-limiter.js'
import { createLoginThrottle, LOGIN_THROTTLE_DEFAULTS } from './auth/login-throttle.js'
import { createPasswordHasher } from './auth/password-hasher.js'
import { createTokenService } from './auth/token-service.js'
import { type Clock, systemClock } from './clock.js'
import { reportListening, runPrimary } from './cluster.js'
import type { TlsFiles } from './config/server-config.js'
import {
  type Config,
  ConfigError,
  configWarnings,
  type Env,
  type LoadConfigOptions,
  loadConfig,
} from './config.js'
import { loadOrCreateDevSecret } from './dev-secret.js'
import { guardConnections } from './http/connection-guard.js'
import { describeCertificate, readTlsMaterial } from './http/tls.js'
import { createLogger } from './logger.js'
import { SiteConfigFileError, SiteConfigInvalidError } from './site-config/site-config-errors.js'
import type { SiteConfig } from './site-config/site-config-schema.js'
import { createMemoryLoginAttemptStore } from './storage/memory/memory-login-attempt-store.js'
import { migrateDatabase, openStores } from './storage/open-stores.js'
import type { Stores } from './storage/stores.js'

/** How long SIGTERM waits for in-flight requests before giving up. */
const SHUTDOWN_DEADLINE_MS = 30_000

export interface Service {
  app: FastifyInstance
  stores: Stores
  /** Where GET /metrics is served (METRICS_PORT); null when it is not, or by the primary of WORKERS > 1. */
  metricsUrl: string | null
  /** The security events on their way to the audit trail. */
  auditSink: AuditSink
  /** Closes the HTTP server (in-flight requests finish), writes the pending audit events, closes the stores. */
  close(): Promise<void>
}

export interface ServiceOptions {
  logger: Logger
  /** The signing secret when config.auth.jwtSecret is null (the persisted development secret). */
  jwtSecret?: string
  clock?: Clock
  appInfo?: { name: string; version: string }
  /** Stores already opened (and migrated); by default they are opened from config.storage. */
  stores?: Stores
}

/** The composition root: stores, the auth domain and the HTTP app, wired from one configuration. */
export async function createService(config: Config, options: ServiceOptions): Promise<Service> {
  const secret = config.auth.jwtSecret ?? options.jwtSecret
  if (secret === undefined) throw new ConfigError('AUTH_JWT_SECRET', 'is not set')
  const clock = options.clock ?? systemClock
  const siteConfig = await loadSiteConfig(config)
  const tls = config.server.tls === null ? null : await readTlsMaterial(config.server.tls)
  const opened = options.stores ?? (await openStores(config.storage, options.logger))
  // METRICS_PORT: prom-client is loaded, and requests and store calls are counted, only when it is set
  const metricsListen = config.server.metrics
  const metrics = metricsListen === null ? null : (await import('./metrics/metrics.js')).createMetrics()
  const stores = metrics === null ? opened : metrics.stores.meter(opened, config.storage)
  const argon2 = createArgon2Threads(config.auth.hashConcurrency)
  // docs/api.md "Audit events": written in batches off the request path, pruned at start and hourly
  const auditSink = createAuditSink({
    store: config.audit.retentionDays === 0 ? null : stores.audit,
    log: options.logger,
    retentionMs: config.audit.retentionDays * 86_400_000,
    now: () => clock.now(),
  })
  try {
    const tokens = createTokenService(
      {
        secret,
        previousSecrets: config.auth.previousJwtSecrets,
        accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds,
        refreshTokenTtlSeconds: config.auth.refreshTokenTtlSeconds,
      },
      clock,
    )
    const limiter = createConcurrencyLimiter({
      concurrency: argon2.capacity,
      queueLimit: config.auth.hashQueueLimit,
      observer: metrics?.argon2.observer,
    })
    metrics?.argon2.watch(limiter)
    const hasher = createPasswordHasher(config.auth.argon2, limiter, argon2)
    const accounts = createAccountService({
      users: stores.users,
      refreshTokens: stores.refreshTokens,
      hasher,
      tokens,
      clock,
      log: options.logger,
      throttle: createLoginThrottle({
        store: stores.loginAttempts ?? createMemoryLoginAttemptStore(),
        // a shared store that fails is replaced by counts in this process (docs/api.md R8.4)
        fallback: stores.loginAttempts === null ? null : createMemoryLoginAttemptStore(),
        settings: {
          ...LOGIN_THROTTLE_DEFAULTS,
          addressFailuresPerMinute: config.http.rateLimitPerMinute,
          accountFreeFailures: config.auth.loginBackoff.afterFailures,
          accountMaxDelayMs: config.auth.loginBackoff.maxDelaySeconds * 1000,
        },
        clock,
      }),
      events: auditSink,
    })
    const app = await buildApp({
      config,
      accounts,
      tokens,
      probes: stores.probes,
      rateCounters: stores.rateCounters,
      appInfo: options.appInfo ?? (await readAppInfo()),
      siteConfig,
      clock,
      logger: options.logger,
      tls,
      requestMetrics: metrics?.requests ?? null,
      answeredBeforeRouting: metrics?.connections.answeredBeforeRouting ?? null,
    })
    // docs/api.md §8: connections in all and per address, pipelined requests, unread answers
    const guard = guardConnections(app.server, config.server, {
      clock,
      logger: options.logger,
      answeredBeforeRouting: metrics?.connections.answeredBeforeRouting ?? null,
    })
    metrics?.connections.watch(guard)
    await app.ready()
    const exposure =
      metrics === null || metricsListen === null
        ? null
        : await metrics.expose(metricsListen, { inWorker: cluster.isWorker, log: options.logger })
    return {
      app,
      stores,
      metricsUrl: exposure?.url ?? null,
      auditSink,
      async close() {
        // in-flight requests finish; a keep-alive connection is closed as soon as its last response is sent
        const reaper = setInterval(() => app.server.closeIdleConnections(), 100)
        try {
          await app.close()
        } finally {
          clearInterval(reaper)
        }
        await exposure?.close()
        await argon2.close()
        await auditSink.close()
        await stores.close()
      },
    }
  } catch (error) {
    await argon2.close()
    await auditSink.close()
    await stores.close()
    throw error
  }
}

/**
 * SITE_CONFIG_FILE, read and validated; null when unset. An unreadable or invalid file is a ConfigError whose lines
 * are those `tessera site-config validate` prints.
 */
async function loadSiteConfig(config: Config): Promise<SiteConfig | null> {
  if (config.siteConfigFile === null) return null
  // loaded only when a file is configured: the validator compiles its schema as it loads
  const { loadSiteConfigFile } = await import('./site-config/load-site-config-file.js')
  try {
    return await loadSiteConfigFile(config.siteConfigFile)
  } catch (error) {
    if (error instanceof SiteConfigInvalidError || error instanceof SiteConfigFileError) {
      throw new ConfigError(
        'SITE_CONFIG_FILE',
        `names a file that is not a valid site configuration:\n${error.message}`,
      )
    }
    throw error
  }
}

/** name and version from package.json, for GET /info and the OpenAPI document. */
export async function readAppInfo(): Promise<{ name: string; version: string }> {
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  return { name: String(manifest.name), version: String(manifest.version) }
}

/**
 * The environment, with the variables of an optional JSON config file beneath it (the environment wins).
 */
export async function readEnvironment(configFile: string | undefined): Promise<Env> {
  if (configFile === undefined) return process.env
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(configFile, 'utf8'))
  } catch (error) {
    throw new ConfigError('--config', `could not be read as JSON: ${(error as Error).message}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('--config', 'must hold a JSON object of variable names and values')
  }
  const fromFile = Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, String(value)]))
  return { ...fromFile, ...process.env }
}

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
 * The primary of WORKERS > 1: prepares what the workers share (the development secret, the migrated schema) so
 * they do not race for it, then runs them. Resolves with the exit code.
 */
async function startWorkers(config: Config, logger: Logger): Promise<number> {
  for (const warning of configWarnings(config)) logger.warn(warning)
  try {
    await loadSiteConfig(config)
    if (config.server.tls !== null) await readTlsMaterial(config.server.tls)
    await signingSecret(config)
    await migrateDatabase(config.storage)
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

/** AUTH_JWT_SECRET, or in development the secret persisted in DATA_DIR. */
async function signingSecret(config: Config): Promise<string> {
  if (config.auth.jwtSecret !== null) return config.auth.jwtSecret
  try {
    return await loadOrCreateDevSecret(config.storage.dataDir)
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot hold the development secret: ${(error as Error).message}`)
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

/** `tessera migrate`: applies pending migrations and exits. */
export async function runMigrations(env: Env): Promise<void> {
  // opens no port: production's HTTPS rule does not apply
  const config = loadConfigOrExit(env, { listens: false })
  try {
    const applied = await migrateDatabase(config.storage)
    console.log(applied.length === 0 ? 'database is up to date' : `applied ${applied.join(', ')}`)
  } catch (error) {
    exitWithError(error)
  }
}

function loadConfigOrExit(env: Env, options?: LoadConfigOptions): Config {
  try {
    return loadConfig(env, options)
  } catch (error) {
    exitWithError(error)
  }
}

/** One line on stderr, naming the variable for a ConfigError, and a non-zero exit. */
function exitWithError(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`tessera: ${message}\n`)
  process.exit(1)
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
