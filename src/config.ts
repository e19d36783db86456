import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { TesseraError } from './errors.js'

export type Environment = 'development' | 'production' | 'test'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Argon2Params {
  /** Memory cost in KiB. */
  memoryKiB: number
  timeCost: number
  parallelism: number
}

/** The whole configuration, read once from the environment, validated and frozen. */
export interface Config {
  env: Environment
  server: {
    host: string
    port: number
    /** Addresses or CIDRs of proxies whose X-Forwarded-For is believed; empty trusts none. */
    trustProxy: readonly string[]
    /** Number of worker processes; 1 runs the server in this process. */
    workers: number
    /** Whole-request deadline: a client that has not sent its request by then is cut off. */
    requestTimeoutMs: number
    /** Deadline for the request headers. */
    headersTimeoutMs: number
    bodyLimitBytes: number
  }
  auth: {
    /** null in development when unset: the server then uses a secret persisted in the data directory. */
    jwtSecret: string | null
    previousJwtSecrets: readonly string[]
    accessTokenTtlSeconds: number
    refreshTokenTtlSeconds: number
    argon2: Argon2Params
    /** Argon2 computations at once: the number of Argon2 threads. */
    hashConcurrency: number
    /** Argon2 computations allowed to wait; past it a request gets 503. */
    hashQueueLimit: number
  }
  storage: {
    dataDir: string
    databaseUrl: string
    redisUrl: string | null
    /** Prefix of every Redis key, so that several deployments (or test runs) can share one server. */
    redisKeyPrefix: string
    maxConnections: number
    /** How long a storage operation may take before it fails with a 500. */
    operationTimeoutMs: number
  }
  http: {
    /** '*' allows any origin (development); otherwise the allowed origins. */
    corsOrigins: '*' | readonly string[]
    /** Requests per client address and minute on each public auth endpoint; 0 turns limiting off. */
    rateLimitPerMinute: number
    healthTimeoutMs: number
  }
  logLevel: LogLevel
  siteConfigFile: string | null
}

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends TesseraError {
  readonly code = 'config_invalid'

  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`)
  }
}

export type Env = Readonly<Record<string, string | undefined>>

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const MIN_SECRET_LENGTH = 32

/**
 * OWASP's Argon2id settings, each as strong as the others: a configuration at or above one row is fine.
 * https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html
 */
const OWASP_ARGON2 = [
  { memoryKiB: 47104, timeCost: 1 },
  { memoryKiB: 19456, timeCost: 2 },
  { memoryKiB: 12288, timeCost: 3 },
  { memoryKiB: 9216, timeCost: 4 },
  { memoryKiB: 7168, timeCost: 5 },
]

/**
 * Reads and validates the configuration from environment variables (see DECISIONS.md). Throws a ConfigError naming
 * the first variable with a bad value. Performs no I/O.
 */
export function loadConfig(env: Env): Readonly<Config> {
  const read = reader(env)
  const nodeEnv = read.oneOf('NODE_ENV', ['development', 'production', 'test'], 'development') as Environment
  const production = nodeEnv === 'production'
  const dataDir = read.string('DATA_DIR', './data')

  const jwtSecret =
    env.AUTH_JWT_SECRET === undefined || env.AUTH_JWT_SECRET === '' ? null : env.AUTH_JWT_SECRET
  if (production && (jwtSecret === null || jwtSecret.length < MIN_SECRET_LENGTH)) {
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      `must be set to at least ${MIN_SECRET_LENGTH} characters in production`,
    )
  }
  const previousJwtSecrets = read.list('AUTH_JWT_PREVIOUS_SECRETS')
  const cores = availableParallelism()
  const workers = read.workers('WORKERS', cores)

  const config: Config = {
    env: nodeEnv,
    server: {
      host: read.string('HOST', '0.0.0.0'),
      port: read.integer('PORT', 3000, { min: 0, max: 65535 }),
      trustProxy: read.list('TRUST_PROXY').map((entry) => {
        if (!isProxyAddress(entry)) {
          throw new ConfigError('TRUST_PROXY', `must list IP addresses or CIDR ranges, got "${entry}"`)
        }
        return entry
      }),
      workers,
      requestTimeoutMs: read.integer('REQUEST_TIMEOUT_MS', 10_000, { min: 1 }),
      headersTimeoutMs: read.integer('HEADERS_TIMEOUT_MS', 5_000, { min: 1 }),
      bodyLimitBytes: 16 * 1024,
    },
    auth: {
      jwtSecret,
      previousJwtSecrets,
      accessTokenTtlSeconds:
        read.integer('AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES', 15, { min: 1, max: 525_600 }) * 60,
      refreshTokenTtlSeconds:
        read.integer('AUTH_REFRESH_TOKEN_EXPIRATION_DAYS', 7, { min: 1, max: 3650 }) * 86_400,
      argon2: {
        memoryKiB: read.integer('AUTH_ARGON2_MEMORY_KIB', 19456, { min: 8, max: 4_194_304 }),
        timeCost: read.integer('AUTH_ARGON2_TIME_COST', 2, { min: 1, max: 100 }),
        parallelism: read.integer('AUTH_ARGON2_PARALLELISM', 1, { min: 1, max: 255 }),
      },
      // the cores are shared by the worker processes: all of them together run at most one hash per core
      hashConcurrency: read.integer('AUTH_HASH_CONCURRENCY', Math.max(1, Math.floor(cores / workers)), {
        min: 1,
        max: 1024,
      }),
      hashQueueLimit: read.integer('AUTH_HASH_QUEUE_LIMIT', 100, { min: 0 }),
    },
    storage: {
      dataDir,
      databaseUrl: read.databaseUrl('DATABASE_URL', `sqlite:${dataDir.replace(/\/+$/, '')}/app.db`),
      redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
      redisKeyPrefix: read.string('REDIS_KEY_PREFIX', 'tessera:'),
      maxConnections: read.integer('DATABASE_MAX_CONNECTIONS', 10, { min: 1, max: 1000 }),
      operationTimeoutMs: read.integer('STORAGE_TIMEOUT_MS', 5_000, { min: 1 }),
    },
    http: {
      corsOrigins: production ? read.origins('CORS_ORIGINS') : '*',
      rateLimitPerMinute: read.integer('RATE_LIMIT_PER_MINUTE', 30, { min: 0 }),
      healthTimeoutMs: read.integer('HEALTH_TIMEOUT_MS', 1_000, { min: 1 }),
    },
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info') as LogLevel,
    siteConfigFile: env.SITE_CONFIG_FILE ? env.SITE_CONFIG_FILE : null,
  }
  const { argon2 } = config.auth
  if (argon2.memoryKiB < 8 * argon2.parallelism) {
    throw new ConfigError(
      'AUTH_ARGON2_MEMORY_KIB',
      `must be at least 8 × AUTH_ARGON2_PARALLELISM (${8 * argon2.parallelism})`,
    )
  }
  return deepFreeze(config)
}

/** Values that are allowed but outside the recommended ranges; the server logs each as a warning. */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = []
  const accessMinutes = config.auth.accessTokenTtlSeconds / 60
  if (accessMinutes < 5 || accessMinutes > 30) {
    warnings.push(
      `AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is ${accessMinutes}; the recommended range is 5 to 30`,
    )
  }
  const refreshDays = config.auth.refreshTokenTtlSeconds / 86_400
  if (refreshDays < 7 || refreshDays > 30) {
    warnings.push(`AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is ${refreshDays}; the recommended range is 7 to 30`)
  }
  const { memoryKiB, timeCost } = config.auth.argon2
  const owaspStrength = OWASP_ARGON2.some((row) => memoryKiB >= row.memoryKiB && timeCost >= row.timeCost)
  if (config.env === 'production' && !owaspStrength) {
    warnings.push(
      `AUTH_ARGON2_MEMORY_KIB=${memoryKiB} with AUTH_ARGON2_TIME_COST=${timeCost} is below the OWASP minimum (19456 KiB, t=2)`,
    )
  }
  if (config.auth.jwtSecret !== null && config.auth.jwtSecret.length < MIN_SECRET_LENGTH) {
    warnings.push(`AUTH_JWT_SECRET is shorter than ${MIN_SECRET_LENGTH} characters; production refuses it`)
  }
  if (
    config.env === 'production' &&
    config.http.corsOrigins !== '*' &&
    config.http.corsOrigins.length === 0
  ) {
    warnings.push('CORS_ORIGINS is empty: browsers on other origins cannot call the service')
  }
  return warnings
}

function reader(env: Env) {
  const raw = (name: string): string | undefined => {
    const value = env[name]?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  return {
    string(name: string, fallback: string): string {
      return raw(name) ?? fallback
    },
    oneOf(name: string, allowed: readonly string[], fallback: string): string {
      const value = raw(name) ?? fallback
      if (!allowed.includes(value)) {
        throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`)
      }
      return value
    },
    integer(name: string, fallback: number, range: { min: number; max?: number }): number {
      const value = raw(name)
      if (value === undefined) return fallback
      const parsed = /^-?\d+$/.test(value) ? Number(value) : Number.NaN
      const max = range.max ?? Number.MAX_SAFE_INTEGER
      if (!Number.isSafeInteger(parsed) || parsed < range.min || parsed > max) {
        const bounds = range.max === undefined ? `at least ${range.min}` : `from ${range.min} to ${range.max}`
        throw new ConfigError(name, `must be an integer ${bounds}, got "${value}"`)
      }
      return parsed
    },
    list(name: string): string[] {
      const value = raw(name)
      if (value === undefined) return []
      return value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
    },
    workers(name: string, cores: number): number {
      const value = raw(name)
      if (value === undefined) return 1
      if (value === 'auto') return cores
      const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN
      if (!Number.isSafeInteger(parsed) || parsed < 1 || parsed > 256) {
        throw new ConfigError(name, `must be "auto" or an integer from 1 to 256, got "${value}"`)
      }
      return parsed
    },
    url(name: string, protocols: readonly string[]): string | null {
      const value = raw(name)
      if (value === undefined) return null
      if (!URL.canParse(value) || !protocols.includes(new URL(value).protocol)) {
        throw new ConfigError(
          name,
          `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
        )
      }
      return value
    },
    databaseUrl(name: string, fallback: string): string {
      const value = raw(name) ?? fallback
      if (value.startsWith('sqlite:')) {
        if (value.length === 'sqlite:'.length) throw new ConfigError(name, 'names no SQLite file')
        return value
      }
      const protocols = ['postgres:', 'postgresql:', 'mysql:', 'mariadb:']
      if (!URL.canParse(value) || !protocols.includes(new URL(value).protocol)) {
        throw new ConfigError(
          name,
          'must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://',
        )
      }
      return value
    },
    origins(name: string): string[] {
      return this.list(name).map((origin) => {
        if (!URL.canParse(origin) || new URL(origin).origin !== origin.replace(/\/$/, '')) {
          throw new ConfigError(name, `must list origins such as https://app.example.com, got "${origin}"`)
        }
        return new URL(origin).origin
      })
    },
  }
}

function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true
  const [address, prefix, ...rest] = entry.split('/')
  if (address === undefined || rest.length > 0) return false
  const family = isIP(address)
  if (family === 0) return false
  if (prefix === undefined) return true
  const bits = /^\d+$/.test(prefix) ? Number(prefix) : -1
  return bits >= 0 && bits <= (family === 4 ? 32 : 128)
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
