import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import { createAccountService } from './auth/account-service.js'
import { createConcurrencyLimiter } from './auth/concurrency-limiter.js'
import { createPasswordHasher } from './auth/password-hasher.js'
import { createTokenService } from './auth/token-service.js'
import { type Clock, systemClock } from './clock.js'
import { type Config, ConfigError, configWarnings, type Env, loadConfig } from './config.js'
import { loadOrCreateDevSecret } from './dev-secret.js'
import { createLogger } from './logger.js'
import { migrateDatabase, openStores } from './storage/open-stores.js'
import type { Stores } from './storage/stores.js'

export interface Service {
  app: FastifyInstance
  stores: Stores
  /** Closes the HTTP server (in-flight requests finish) and then the stores. */
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
  const stores = options.stores ?? (await openStores(config.storage))
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
    const hasher = createPasswordHasher(
      config.auth.argon2,
      createConcurrencyLimiter({
        concurrency: config.auth.hashConcurrency,
        queueLimit: config.auth.hashQueueLimit,
      }),
    )
    const accounts = createAccountService({
      users: stores.users,
      refreshTokens: stores.refreshTokens,
      hasher,
      tokens,
      clock,
      log: options.logger,
    })
    const app = await buildApp({
      config,
      accounts,
      tokens,
      probes: stores.probes,
      appInfo: options.appInfo ?? (await readAppInfo()),
      clock,
      logger: options.logger,
    })
    await app.ready()
    return {
      app,
      stores,
      async close() {
        await app.close()
        await stores.close()
      },
    }
  } catch (error) {
    await stores.close()
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
  for (const warning of configWarnings(config)) logger.warn(warning)

  let service: Service
  try {
    const jwtSecret = config.auth.jwtSecret ?? (await loadOrCreateDevSecret(config.storage.dataDir))
    service = await createService(config, { logger, jwtSecret })
    await listen(service.app, config.server.host, config.server.port)
  } catch (error) {
    exitWithError(error)
  }
  const address = service.app.server.address() as AddressInfo
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  logger.info(
    { url, store: service.stores.description },
    `tessera listening on ${url} (store: ${service.stores.description})`,
  )

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
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
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'))
}

/** `tessera migrate`: applies pending migrations and exits. */
export async function runMigrations(env: Env): Promise<void> {
  const config = loadConfigOrExit(env)
  try {
    const applied = await migrateDatabase(config.storage)
    console.log(applied.length === 0 ? 'database is up to date' : `applied ${applied.join(', ')}`)
  } catch (error) {
    exitWithError(error)
  }
}

function loadConfigOrExit(env: Env): Config {
  try {
    return loadConfig(env)
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
