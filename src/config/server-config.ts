import { isIP } from 'node:net'
import type { EnvReader } from './env-reader.js'

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
}

/** HOST, PORT, TRUST_PROXY, WORKERS, REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS. `cores` is what WORKERS=auto means. */
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
  }
}

/** An address, a CIDR range, or one of the names proxy-addr knows (loopback, linklocal, uniquelocal). */
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
