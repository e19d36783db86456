import { Writable } from 'node:stream'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { type Clock, systemClock } from '../../src/clock.js'
import { type Config, loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createService } from '../../src/server.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import type { Backend, BackendInstance } from './backends.js'

export const TEST_SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz'

/** Cheap Argon2 and no rate limit: the suites exercise behaviour, the benchmarks cost. */
export const TEST_ENV: Readonly<Record<string, string>> = {
  NODE_ENV: 'test',
  // a loopback address: what lets a test run NODE_ENV=production without TLS files or TRUST_PROXY (R5.7.1)
  HOST: '127.0.0.1',
  AUTH_JWT_SECRET: TEST_SECRET,
  AUTH_ARGON2_MEMORY_KIB: '1024',
  AUTH_ARGON2_TIME_COST: '1',
  RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'info',
}

/**
 * TEST_BASE_PATH (the vitest project `base-path` sets it to /api): every service these suites start serves under
 * that BASE_PATH, and the paths the tests inject are put under it, so the same suites check the prefixed service.
 */
export const TEST_BASE_PATH = process.env.TEST_BASE_PATH ?? ''
const BASE_PATH_ENV: Record<string, string> = TEST_BASE_PATH === '' ? {} : { BASE_PATH: TEST_BASE_PATH }

/** A path of the API as a listening test service serves it (under TEST_BASE_PATH). */
export const apiPath = (path: string): string => `${TEST_BASE_PATH}${path}`

/** Makes app.inject put every path under `basePath`, as a client of a service behind BASE_PATH would send it. */
function injectUnderBasePath(app: FastifyInstance, basePath: string): void {
  const inject = app.inject.bind(app)
  const underBasePath = (options: InjectOptions | string): InjectOptions | string => {
    if (typeof options === 'string') return `${basePath}${options}`
    if (typeof options.url === 'string') return { ...options, url: `${basePath}${options.url}` }
    if (typeof options.path === 'string') return { ...options, path: `${basePath}${options.path}` }
    throw new Error('a test under TEST_BASE_PATH injects by url or path')
  }
  app.inject = ((options?: InjectOptions | string) => {
    if (options === undefined)
      throw new Error('a test under TEST_BASE_PATH injects with options, not the chain')
    return inject(underBasePath(options))
  }) as typeof app.inject
}

export interface TestService {
  app: FastifyInstance
  stores: Stores
  config: Config
  /** Every log line written so far, as text. */
  logLines: string[]
  /** Parsed log records. */
  logs(): Array<Record<string, unknown>>
  /** Writes the security events recorded so far to the audit trail. */
  flushAudit(): Promise<void>
  close(): Promise<void>
}

export interface TestServiceOptions {
  env?: Record<string, string>
  clock?: Clock
  /** Wraps the opened stores, to observe calls or inject failures. */
  wrapStores?: (stores: Stores) => Stores
  /** Reuse a backend instance (the same database) instead of creating one. */
  instance?: BackendInstance
  /** Whether to call Service.start (the senders, the pruner, the key sealing), as `tessera serve` does; by default yes. */
  start?: boolean
}

/** The real service (createService, the composition root) on a fresh backend, with its logs captured. */
export async function startTestService(
  backend: Backend,
  options: TestServiceOptions = {},
): Promise<TestService> {
  const instance = options.instance ?? (await backend.setup())
  const ownsInstance = options.instance === undefined
  const config = loadConfig({ ...TEST_ENV, ...BASE_PATH_ENV, ...instance.env, ...options.env })
  const logLines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean))
      done()
    },
  })
  const logger = createLogger(config.logLevel, sink)
  const opened = await openStores(config.storage, options.clock ?? systemClock, logger)
  const stores = options.wrapStores ? options.wrapStores(opened) : opened
  const service = await createService(config, { logger, clock: options.clock, stores })
  if (options.start !== false) service.start()
  // a test that sets BASE_PATH itself injects the paths it means
  if (TEST_BASE_PATH !== '' && config.http.basePath === TEST_BASE_PATH)
    injectUnderBasePath(service.app, TEST_BASE_PATH)
  return {
    app: service.app,
    stores: service.stores,
    config,
    logLines,
    logs: () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
    flushAudit: () => service.auditSink.flush(),
    async close() {
      await service.close()
      if (ownsInstance) await instance.teardown()
    },
  }
}
