import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'
import type { Environment } from './environment.js'

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
  /** docs/api.md R8.5: failed logins of an account before it backs off (0: no backoff), and the longest wait. */
  loginBackoff: { afterFailures: number; maxDelaySeconds: number }
}

/**
 * docs/api.md R5.5.3: the strength rule of every signing secret, current and previous. HS256 needs a key of 256
 * bits; a secret typed by hand or left as a placeholder ("secret", "changeme…", one character repeated) is
 * guessable offline from any token it signed. No rule can prove a string random, so this one refuses what is
 * plainly not: fewer than 32 characters, or fewer than 10 distinct ones. `openssl rand -base64 48` (64 characters,
 * about 40 distinct) and `openssl rand -hex 32` (64 characters of 16 possible; fewer than 10 distinct happens
 * about once in 10^16) always pass.
 */
export const SECRET_RULE = { minLength: 32, minDistinct: 10 } as const

const WEAK_SECRET = `must have at least ${SECRET_RULE.minLength} characters, ${SECRET_RULE.minDistinct} of them distinct`

/** Whether `secret` meets SECRET_RULE. */
export function isStrongSecret(secret: string): boolean {
  return secret.length >= SECRET_RULE.minLength && new Set(secret).size >= SECRET_RULE.minDistinct
}

/** The weak secrets among AUTH_JWT_SECRET and AUTH_JWT_PREVIOUS_SECRETS, each named without its value. */
function weakSecrets(
  jwtSecret: string | null,
  previous: readonly string[],
): [variable: string, what: string][] {
  const weak: [string, string][] = []
  if (jwtSecret !== null && !isStrongSecret(jwtSecret)) weak.push(['AUTH_JWT_SECRET', ''])
  previous.forEach((secret, index) => {
    if (!isStrongSecret(secret)) weak.push(['AUTH_JWT_PREVIOUS_SECRETS', `entry ${index + 1} `])
  })
  return weak
}

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
  if (context.env === 'production' && jwtSecret === null) {
    throw new ConfigError('AUTH_JWT_SECRET', 'must be set in production (openssl rand -base64 48 makes one)')
  }
  const previousJwtSecrets = read.list('AUTH_JWT_PREVIOUS_SECRETS')
  // a previous secret still verifies: a weak one lets anyone forge tokens as surely as a weak current one
  const [weak] = weakSecrets(jwtSecret, previousJwtSecrets)
  if (context.env === 'production' && weak !== undefined) {
    throw new ConfigError(weak[0], `${weak[1]}${WEAK_SECRET}, in production`)
  }
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
    loginBackoff: {
      afterFailures: read.integer('AUTH_LOGIN_BACKOFF_AFTER', 5, { min: 0, max: 1000 }),
      maxDelaySeconds: read.integer('AUTH_LOGIN_BACKOFF_MAX_SECONDS', 300, { min: 1, max: 86_400 }),
    },
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
  for (const [variable, what] of weakSecrets(auth.jwtSecret, auth.previousJwtSecrets)) {
    warnings.push(`${variable} ${what}${WEAK_SECRET}; production refuses it`)
  }
  return warnings
}
