// The certificate of the HTTPS phase: self-signed P-256 for localhost and 127.0.0.1, made with openssl for the run
// and given to both the service and the bare Fastify HTTPS server, so both do the same TLS work.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * Writes cert.pem and key.pem into `dir`; resolves with the variables that name them (TLS_CERT_FILE, TLS_KEY_FILE).
 * @param {string} dir
 * @returns {Promise<{ TLS_CERT_FILE: string, TLS_KEY_FILE: string }>}
 */
export async function makeCertificate(dir) {
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ])
  return { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }
}
