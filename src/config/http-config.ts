import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'
import type { Environment } from './environment.js'
import { isLoopbackHost } from './server-config.js'

export interface HttpConfig {
  /** '*' allows any origin (development); otherwise the allowed origins. */
  corsOrigins: '*' | readonly string[]
  /** Requests per client address and minute on each public auth endpoint; 0 turns limiting off. */
  rateLimitPerMinute: number
  healthTimeoutMs: number
  /** API_DOCS: whether GET /openapi.json and GET /docs are served (by default outside production only). */
  apiDocs: boolean
  /** DEMO_PAGE: whether GET /demo, the client's demo page, is served (by default outside production only). */
  demoPage: boolean
  /**
   * ADMIN_CONSOLE: whether GET /admin, the admin console, and its files under /admin/assets/ are served (by default
   * outside production only). The admin API answers either way.
   */
  adminConsole: boolean
  /**
   * BASE_PATH: the prefix of every route (`/api`: `/api/auth/login`, `/api/docs`); '' (the default) serves the
   * specification's paths as they are. Starts with a slash and ends without one.
   */
  basePath: string
}

/**
 * CORS_ORIGINS (read in production only: elsewhere any origin is allowed), RATE_LIMIT_PER_MINUTE, HEALTH_TIMEOUT_MS,
 * API_DOCS, DEMO_PAGE, ADMIN_CONSOLE, BASE_PATH.
 */
export function readHttpConfig(read: EnvReader, env: Environment): HttpConfig {
  return {
    corsOrigins: env === 'production' ? readCorsOrigins(read) : '*',
    rateLimitPerMinute: read.integer('RATE_LIMIT_PER_MINUTE', 30, { min: 0 }),
    healthTimeoutMs: read.integer('HEALTH_TIMEOUT_MS', 1_000, { min: 1 }),
    apiDocs: read.oneOf('API_DOCS', ['true', 'false'], env === 'production' ? 'false' : 'true') === 'true',
    demoPage: read.oneOf('DEMO_PAGE', ['true', 'false'], env === 'production' ? 'false' : 'true') === 'true',
    adminConsole:
      read.oneOf('ADMIN_CONSOLE', ['true', 'false'], env === 'production' ? 'false' : 'true') === 'true',
    basePath: readBasePath(read),
  }
}

/**
 * BASE_PATH: one or more path segments, each of letters, digits and `-._~` (the characters a path segment may hold
 * without percent-encoding, so the prefix matches the same requests however a client encodes it). A trailing slash
 * is dropped; `/` alone is no prefix.
 */
function readBasePath(read: EnvReader): string {
  const value = read.string('BASE_PATH', '')
  const path = value.replace(/\/+$/, '')
  if (path === '' && value !== '') return ''
  if (path !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) {
    throw new ConfigError(
      'BASE_PATH',
      `must be a path such as /api (segments of letters, digits and -._~), got ${shownValue(value)}`,
    )
  }
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new ConfigError('BASE_PATH', `must not hold . or .. segments, got ${shownValue(value)}`)
  }
  return path
}

/**
 * CORS_ORIGINS in production. An http:// origin is a page whose script anyone on its network path can change, and
 * that script would hold the user's tokens (docs/api.md §5.7): only a loopback one is accepted (local testing).
 */
function readCorsOrigins(read: EnvReader): string[] {
  const origins = read
    .listOf('CORS_ORIGINS', 'origins such as https://app.example.com', isOrigin)
    .map((origin) => new URL(origin))
  const insecure = origins.find((origin) => origin.protocol !== 'https:' && !isLoopbackHost(origin.hostname))
  if (insecure !== undefined) {
    throw new ConfigError(
      'CORS_ORIGINS',
      `must list https origins in production (http only on a loopback address), got ${shownValue(insecure.origin)}`,
    )
  }
  return origins.map((origin) => origin.origin)
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
