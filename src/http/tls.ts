import { X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createSecureServer } from 'node:http2'
import { createSecureContext } from 'node:tls'
import { ConfigError } from '../config/config-error.js'
import type { TlsFiles } from '../config/server-config.js'

/** The certificate chain and private key of the HTTPS server, as PEM. */
export interface TlsMaterial {
  cert: Buffer
  key: Buffer
}

/** What the logs say about a certificate: enough to tell a renewed one from the old one. */
export interface CertificateSummary {
  subject: string
  validTo: string
  fingerprint256: string
}

/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE and checks that they make a usable pair (PEM, the key matching the
 * certificate). Throws a ConfigError naming the variable at fault, so a bad renewal is refused rather than served.
 */
export async function readTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  const cert = await readPem(files.certFile, 'TLS_CERT_FILE')
  const key = await readPem(files.keyFile, 'TLS_KEY_FILE')
  try {
    new X509Certificate(cert)
  } catch (error) {
    throw new ConfigError('TLS_CERT_FILE', `does not hold a PEM certificate: ${(error as Error).message}`)
  }
  try {
    createSecureContext({ cert, key })
  } catch (error) {
    throw new ConfigError(
      'TLS_KEY_FILE',
      `does not hold the key of TLS_CERT_FILE: ${(error as Error).message}`,
    )
  }
  return { cert, key }
}

/** The leaf certificate's subject, expiry and SHA-256 fingerprint. */
export function describeCertificate(cert: Buffer): CertificateSummary {
  const certificate = new X509Certificate(cert)
  return {
    subject: certificate.subject.replace(/\n/g, ', '),
    validTo: new Date(certificate.validTo).toISOString(),
    fingerprint256: certificate.fingerprint256,
  }
}

async function readPem(file: string, variable: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (error) {
    throw new ConfigError(
      variable,
      `cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'} ${file}`,
    )
  }
}

/** How long an HTTP/2 connection may stay idle, and an HTTP/1.1 one between requests: Fastify's default. */
const IDLE_TIMEOUT_MS = 72_000
/** Streams one HTTP/2 connection may have open at once (Node's default is unbounded). */
const MAX_CONCURRENT_STREAMS = 100

export interface HttpsLimits {
  headersTimeoutMs: number
  requestTimeoutMs: number
}

/**
 * Fastify's serverFactory for TLS_CERT_FILE: an HTTP/2 server over TLS that speaks HTTP/1.1 to a client that does
 * not offer h2 (ALPN). `server.setSecureContext` swaps the certificate of new connections (SIGHUP).
 *
 * Typed as node:http's Server, as Fastify's instance type is tied to its server's: the routes use only what HTTP/1.1
 * requests and HTTP/2's compatibility API share.
 */
export function httpsServerFactory(material: TlsMaterial, limits: HttpsLimits) {
  return (handler: (request: IncomingMessage, response: ServerResponse) => void): Server => {
    const server = createSecureServer(
      {
        allowHTTP1: true,
        cert: material.cert,
        key: material.key,
        minVersion: 'TLSv1.2',
        // a client that opens a connection and never completes the handshake is cut off like a slow request
        handshakeTimeout: limits.headersTimeoutMs,
        settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
      },
      handler as never,
    )
    // HTTP/1.1 over this server goes through node:http's connection handling, which reads its deadlines from here
    // (what Fastify sets on an HTTP/1.1 server of its own)
    Object.assign(server, {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    })
    // an HTTP/2 connection idle this long is told to go away (server.close() does the same on shutdown)
    server.on('session', (session) => session.setTimeout(IDLE_TIMEOUT_MS, () => session.close()))
    return server as unknown as Server
  }
}
