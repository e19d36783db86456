import type { Environment } from '../config.js'
import type { EnvReader } from './env-reader.js'

export interface HttpConfig {
  /** '*' allows any origin (development); otherwise the allowed origins. */
  corsOrigins: '*' | readonly string[]
  /** Requests per client address and minute on each public auth endpoint; 0 turns limiting off. */
  rateLimitPerMinute: number
  healthTimeoutMs: number
}

/** CORS_ORIGINS (read in production only: elsewhere any origin is allowed), RATE_LIMIT_PER_MINUTE, HEALTH_TIMEOUT_MS. */
export function readHttpConfig(read: EnvReader, env: Environment): HttpConfig {
  return {
    corsOrigins:
      env === 'production'
        ? read
            .listOf('CORS_ORIGINS', 'origins such as https://app.example.com', isOrigin)
            .map((origin) => new URL(origin).origin)
        : '*',
    rateLimitPerMinute: read.integer('RATE_LIMIT_PER_MINUTE', 30, { min: 0 }),
    healthTimeoutMs: read.integer('HEALTH_TIMEOUT_MS', 1_000, { min: 1 }),
  }
}

export function httpWarnings(http: HttpConfig, env: Environment): string[] {
  if (env === 'production' && http.corsOrigins !== '*' && http.corsOrigins.length === 0) {
    return ['CORS_ORIGINS is empty: browsers on other origins cannot call the service']
  }
  return []
}

/** An origin as a browser sends it (scheme, host, port); a trailing slash is allowed, a path is not. */
function isOrigin(value: string): boolean {
  return URL.canParse(value) && new URL(value).origin === value.replace(/\/$/, '')
}
