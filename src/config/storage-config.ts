import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'

export interface StorageConfig {
  dataDir: string
  databaseUrl: string
  redisUrl: string | null
  /** Prefix of every Redis key, so that several deployments (or test runs) can share one server. */
  redisKeyPrefix: string
  maxConnections: number
  /** How long a storage operation may take before it fails with a 500. */
  operationTimeoutMs: number
}

const DATABASE_PROTOCOLS = ['postgres:', 'postgresql:', 'mysql:', 'mariadb:']

/**
 * DATA_DIR, DATABASE_URL (by default a SQLite file in DATA_DIR), DATABASE_MAX_CONNECTIONS, REDIS_URL,
 * REDIS_KEY_PREFIX, STORAGE_TIMEOUT_MS. Whether the servers answer is checked when the stores open.
 */
export function readStorageConfig(read: EnvReader): StorageConfig {
  const dataDir = read.string('DATA_DIR', './data')
  return {
    dataDir,
    databaseUrl: databaseUrl(read.string('DATABASE_URL', `sqlite:${dataDir.replace(/\/+$/, '')}/app.db`)),
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: read.string('REDIS_KEY_PREFIX', 'tessera:'),
    maxConnections: read.integer('DATABASE_MAX_CONNECTIONS', 10, { min: 1, max: 1000 }),
    operationTimeoutMs: read.integer('STORAGE_TIMEOUT_MS', 5_000, { min: 1 }),
  }
}

function databaseUrl(value: string): string {
  if (value.startsWith('sqlite:')) {
    if (value.length === 'sqlite:'.length) throw new ConfigError('DATABASE_URL', 'names no SQLite file')
    return value
  }
  if (!URL.canParse(value) || !DATABASE_PROTOCOLS.includes(new URL(value).protocol)) {
    throw new ConfigError(
      'DATABASE_URL',
      'must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://',
    )
  }
  return value
}
