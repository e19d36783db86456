import type { Environment } from '../config.js'
import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'

export interface Argon2Params {
  /** Memory cost in KiB. */
  memoryKiB: number
  timeCost: number
  parallelism: number
}

export interface AuthConfig {
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
 * The AUTH_* variables. Production needs a signing secret of its own; the default AUTH_HASH_CONCURRENCY shares the
 * cores among the worker processes.
 */
export function readAuthConfig(
  read: EnvReader,
  context: { env: Environment; cores: number; workers: number },
): AuthConfig {
  const jwtSecret = read.optional('AUTH_JWT_SECRET')
  if (context.env === 'production' && (jwtSecret === null || jwtSecret.length < MIN_SECRET_LENGTH)) {
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      `must be set to at least ${MIN_SECRET_LENGTH} characters in production`,
    )
  }
  const previousJwtSecrets = read.list('AUTH_JWT_PREVIOUS_SECRETS')
  const accessMinutes = read.integer('AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES', 15, { min: 1, max: 525_600 })
  const refreshDays = read.integer('AUTH_REFRESH_TOKEN_EXPIRATION_DAYS', 7, { min: 1, max: 3650 })
  const argon2 = {
    memoryKiB: read.integer('AUTH_ARGON2_MEMORY_KIB', 19456, { min: 8, max: 4_194_304 }),
    timeCost: read.integer('AUTH_ARGON2_TIME_COST', 2, { min: 1, max: 100 }),
    parallelism: read.integer('AUTH_ARGON2_PARALLELISM', 1, { min: 1, max: 255 }),
  }
  // Argon2 itself needs 8 KiB per lane
  if (argon2.memoryKiB < 8 * argon2.parallelism) {
    throw new ConfigError(
      'AUTH_ARGON2_MEMORY_KIB',
      `must be at least 8 × AUTH_ARGON2_PARALLELISM (${8 * argon2.parallelism})`,
    )
  }
  // the cores are shared by the worker processes: all of them together run at most one hash per core
  const defaultConcurrency = Math.max(1, Math.floor(context.cores / context.workers))
  return {
    jwtSecret,
    previousJwtSecrets,
    accessTokenTtlSeconds: accessMinutes * 60,
    refreshTokenTtlSeconds: refreshDays * 86_400,
    argon2,
    hashConcurrency: read.integer('AUTH_HASH_CONCURRENCY', defaultConcurrency, { min: 1, max: 1024 }),
    hashQueueLimit: read.integer('AUTH_HASH_QUEUE_LIMIT', 100, { min: 0 }),
  }
}

/** Allowed values outside the recommended ranges, in the order the server logs them. */
export function authWarnings(auth: AuthConfig, env: Environment): string[] {
  const warnings: string[] = []
  const accessMinutes = auth.accessTokenTtlSeconds / 60
  if (accessMinutes < 5 || accessMinutes > 30) {
    warnings.push(
      `AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is ${accessMinutes}; the recommended range is 5 to 30`,
    )
  }
  const refreshDays = auth.refreshTokenTtlSeconds / 86_400
  if (refreshDays < 7 || refreshDays > 30) {
    warnings.push(`AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is ${refreshDays}; the recommended range is 7 to 30`)
  }
  const { memoryKiB, timeCost } = auth.argon2
  const owaspStrength = OWASP_ARGON2.some((row) => memoryKiB >= row.memoryKiB && timeCost >= row.timeCost)
  if (env === 'production' && !owaspStrength) {
    warnings.push(
      `AUTH_ARGON2_MEMORY_KIB=${memoryKiB} with AUTH_ARGON2_TIME_COST=${timeCost} is below the OWASP minimum (19456 KiB, t=2)`,
    )
  }
  if (auth.jwtSecret !== null && auth.jwtSecret.length < MIN_SECRET_LENGTH) {
    warnings.push(`AUTH_JWT_SECRET is shorter than ${MIN_SECRET_LENGTH} characters; production refuses it`)
  }
  return warnings
}
