import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../src/clock.js'
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

export interface TestService {
  app: FastifyInstance
  stores: Stores
  config: Config
  /** Every log line written so far, as text. */
  logLines: string[]
  /** Parsed log records. */
  logs(): Array<Record<string, unknown>>
  close(): Promise<void>
}

export interface TestServiceOptions {
  env?: Record<string, string>
  clock?: Clock
  /** Wraps the opened stores, to observe calls or inject failures. */
  wrapStores?: (stores: Stores) => Stores
  /** Reuse a backend instance (the same database) instead of creating one. */
  instance?: BackendInstance
}

/** The real service (createService, the composition root) on a fresh backend, with its logs captured. */
export async function startTestService(
  backend: Backend,
  options: TestServiceOptions = {},
): Promise<TestService> {
  const instance = options.instance ?? (await backend.setup())
  const ownsInstance = options.instance === undefined
  const config = loadConfig({ ...TEST_ENV, ...instance.env, ...options.env })
  const logLines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean))
      done()
    },
  })
  const logger = createLogger(config.logLevel, sink)
  const opened = await openStores(config.storage, logger)
  const stores = options.wrapStores ? options.wrapStores(opened) : opened
  const service = await createService(config, { logger, clock: options.clock, stores })
  return {
    app: service.app,
    stores: service.stores,
    config,
    logLines,
    logs: () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
    async close() {
      await service.close()
      if (ownsInstance) await instance.teardown()
    },
  }
}
