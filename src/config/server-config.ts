import { isIP, isIPv4 } from 'node:net'
import { compile } from '@fastify/proxy-addr'
import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'
import type { Environment } from './environment.js'

/** The PEM files of the HTTPS server, read at start and again on SIGHUP. */
export interface TlsFiles {
  certFile: string
  keyFile: string
}

export interface ServerConfig {
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
  /** TLS_CERT_FILE and TLS_KEY_FILE: HTTPS (and HTTP/2) with them; null serves plain HTTP. */
  tls: TlsFiles | null
  /** MAX_CONNECTIONS: connections open at once; null derives it at start from the file-descriptor limit. */
  maxConnections: number | null
  /** MAX_CONNECTIONS_PER_ADDRESS: connections open at once from one client address. */
  maxConnectionsPerAddress: number
  /** WRITE_TIMEOUT_MS: a client that reads nothing of an answer for this long is cut off. */
  writeTimeoutMs: number
  /** METRICS_HOST and METRICS_PORT: where GET /metrics is served, apart from the API; null (the default) serves none. */
  metrics: { host: string; port: number } | null
  /**
   * PUBLIC_URL: the service's public base URL, BASE_PATH included, without a trailing slash
   * (`https://auth.example.com`, `https://example.com/api`); null when unset. See publicBaseUrl.
   */
  publicUrl: string | null
}

/**
 * HOST, PORT, TRUST_PROXY, WORKERS, REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS, TLS_CERT_FILE, TLS_KEY_FILE,
 * MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, WRITE_TIMEOUT_MS, METRICS_PORT, METRICS_HOST, PUBLIC_URL. `cores`
 * is what WORKERS=auto means.
 */
export function readServerConfig(read: EnvReader, cores: number): ServerConfig {
  return {
    host: read.string('HOST', '0.0.0.0'),
    port: read.integer('PORT', 3000, { min: 0, max: 65535 }),
    trustProxy: read.listOf('TRUST_PROXY', 'IP addresses or CIDR ranges', isProxyAddress),
    workers: read.countOrAuto('WORKERS', 1, cores, 256),
    requestTimeoutMs: read.integer('REQUEST_TIMEOUT_MS', 10_000, { min: 1 }),
    headersTimeoutMs: read.integer('HEADERS_TIMEOUT_MS', 5_000, { min: 1 }),
    // docs/api.md R1.9: bodies over 16 KiB are a 413
    bodyLimitBytes: 16 * 1024,
    tls: readTlsFiles(read),
    // docs/api.md §8: what one process and one client address may hold
    maxConnections:
      read.optional('MAX_CONNECTIONS') === null ? null : read.integer('MAX_CONNECTIONS', 0, { min: 1 }),
    maxConnectionsPerAddress: read.integer('MAX_CONNECTIONS_PER_ADDRESS', 256, { min: 1 }),
    writeTimeoutMs: read.integer('WRITE_TIMEOUT_MS', 10_000, { min: 1 }),
    metrics: readMetricsListen(read),
    publicUrl: readPublicUrl(read),
  }
}

/**
 * PUBLIC_URL: an http or https URL with no user name, password, query or fragment; a trailing slash is dropped, so
 * that a path appended to it has one slash. The production rules are those of the features that need it
 * (config/signing-config.ts).
 */
function readPublicUrl(read: EnvReader): string | null {
  const value = read.url('PUBLIC_URL', ['http:', 'https:'])
  if (value === null) return null
  const url = new URL(value)
  if (url.username !== '' || url.password !== '' || /[?#]/.test(value)) {
    throw new ConfigError(
      'PUBLIC_URL',
      `must be a base URL such as https://auth.example.com/api, without credentials, query or fragment, got ${shownValue(value)}`,
    )
  }
  return url.href.replace(/\/+$/, '')
}

/**
 * The service's public base URL, for the answers that need an absolute URL (the JWKS URL of
 * /.well-known/openid-configuration): PUBLIC_URL, or outside production `http://localhost:<PORT>` (https with
 * TLS_CERT_FILE) and BASE_PATH. Null in production without PUBLIC_URL. Never taken from a request's Host header,
 * which the client writes: a document that names where the keys are must not let a request choose it.
 */
export function publicBaseUrl(config: {
  env: Environment
  server: Pick<ServerConfig, 'publicUrl' | 'tls' | 'port'>
  http: { basePath: string }
}): string | null {
  if (config.server.publicUrl !== null) return config.server.publicUrl
  if (config.env === 'production') return null
  const scheme = config.server.tls === null ? 'http' : 'https'
  return `${scheme}://localhost:${config.server.port}${config.http.basePath}`
}

/**
 * METRICS_PORT (unset: no metrics) and METRICS_HOST (127.0.0.1: the metrics say how the service is used, so they
 * are not published unless asked). Port 0 takes a free one, which the start-up line names.
 */
function readMetricsListen(read: EnvReader): { host: string; port: number } | null {
  const host = read.optional('METRICS_HOST')
  if (read.optional('METRICS_PORT') === null) {
    if (host !== null) throw new ConfigError('METRICS_HOST', 'is set without METRICS_PORT')
    return null
  }
  const port = read.integer('METRICS_PORT', 0, { min: 0, max: 65535 })
  if (port !== 0 && port === read.integer('PORT', 3000, { min: 0, max: 65535 })) {
    throw new ConfigError(
      'METRICS_PORT',
      "must differ from PORT: the metrics are never served on the API's port",
    )
  }
  return { host: host ?? '127.0.0.1', port }
}

/** TLS_CERT_FILE and TLS_KEY_FILE, both or neither. Whether they can be read is checked at start. */
function readTlsFiles(read: EnvReader): TlsFiles | null {
  const certFile = read.optional('TLS_CERT_FILE')
  const keyFile = read.optional('TLS_KEY_FILE')
  if (certFile === null && keyFile === null) return null
  if (certFile === null) throw new ConfigError('TLS_KEY_FILE', 'is set without TLS_CERT_FILE')
  if (keyFile === null) throw new ConfigError('TLS_CERT_FILE', 'is set without TLS_KEY_FILE')
  return { certFile, keyFile }
}

/**
 * docs/api.md §5.7: tokens travel over HTTPS only. Production without TLS files starts only behind a proxy that ends
 * TLS (TRUST_PROXY, whose X-Forwarded-Proto is then checked per request) or on a loopback address, where nothing
 * outside the machine can listen in.
 */
export function checkTransport(server: ServerConfig, env: Environment): void {
  if (env !== 'production' || server.tls !== null || server.trustProxy.length > 0) return
  if (isLoopbackHost(server.host)) return
  throw new ConfigError(
    'TLS_CERT_FILE',
    'and TLS_KEY_FILE must be set in production, unless TRUST_PROXY names the proxy that ends TLS or HOST is a loopback address',
  )
}

/** localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost' || bare === '::1') return true
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare
  // isIPv4, not isIP: the same answer, without compiling isIPv6's expression for a host name
  return isIPv4(v4) && v4.startsWith('127.')
}

/**
 * What @fastify/proxy-addr, which matches TRUST_PROXY at run time (http/trusted-proxies.ts), accepts: one of its
 * names (loopback, linklocal, uniquelocal), or an address or a CIDR range, in the plain notation only (an address
 * Node's isIP knows and a decimal prefix, not the shorthands or netmasks proxy-addr would also take).
 */
function isProxyAddress(entry: string): boolean {
  try {
    compile(entry)
  } catch {
    return false
  }
  if (/^[a-z]+$/.test(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  return rest.length === 0 && isIP(address) !== 0 && (prefix === undefined || /^\d+$/.test(prefix))
}
