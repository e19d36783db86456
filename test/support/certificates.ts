import { execFile } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

export interface TestCertificate {
  certFile: string
  keyFile: string
  cert: Buffer
  /** SHA-256 fingerprint, as a TLS peer certificate reports it. */
  fingerprint256: string
}

/** A self-signed P-256 certificate for localhost and 127.0.0.1, valid one day, made with openssl in `dir`. */
export async function makeCertificate(dir: string, name: string): Promise<TestCertificate> {
  const certFile = join(dir, `${name}-cert.pem`)
  const keyFile = join(dir, `${name}-key.pem`)
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
    `/CN=localhost`,
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ])
  const cert = await readFile(certFile)
  return { certFile, keyFile, cert, fingerprint256: new X509Certificate(cert).fingerprint256 }
}
