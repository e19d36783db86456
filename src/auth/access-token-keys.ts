import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { calculateJwkThumbprint, exportJWK } from 'jose'
import { ConfigError } from '../config/config-error.js'
import { readOrCreateFileOnce } from '../config/dev-secret.js'
import type { AsymmetricAlgorithm, SigningConfig } from '../config/signing-config.js'
import {
  type AccessTokenKeyRing,
  createKeyRing,
  createSignatureSigner,
  keyFitsAlgorithm,
} from './access-token-signature.js'

/** A public key as GET /.well-known/jwks.json serves it (RFC 7517), for verifying access tokens only. */
export interface PublicJwk {
  kty: 'OKP' | 'EC'
  crv: 'Ed25519' | 'P-256'
  x: string
  /** EC keys only. */
  y?: string
  /** The key's RFC 7638 thumbprint (SHA-256, base64url): the `kid` of the tokens it signed. */
  kid: string
  alg: AsymmetricAlgorithm
  use: 'sig'
}

/** The access-token keys of AUTH_JWT_ALGORITHM EdDSA or ES256: the signer, the keys that verify, and the JWKS. */
export interface AccessTokenKeys extends AccessTokenKeyRing {
  algorithm: AsymmetricAlgorithm
  /** The `kid` of the signing key, which every access token issued now carries. */
  kid: string
  /** The signing key's public half first, then each previous key. */
  jwks: { keys: readonly PublicJwk[] }
}

/** The keys each algorithm takes, as the operator reads it. */
const KEY_KIND: Record<AsymmetricAlgorithm, string> = { EdDSA: 'an Ed25519 key', ES256: 'a P-256 key' }

/**
 * The public JWK of `publicKey`. Its `kid` is the RFC 7638 thumbprint: derived from the key alone, so every instance
 * given the same key names it alike with no setting to keep in step, and `tessera keys generate` can print it.
 */
export async function publicJwk(algorithm: AsymmetricAlgorithm, publicKey: KeyObject): Promise<PublicJwk> {
  const { kty, crv, x, y } = await exportJWK(publicKey)
  const members = { kty, crv, x, ...(y === undefined ? {} : { y }) }
  const kid = await calculateJwkThumbprint(members, 'sha256')
  return { ...(members as Pick<PublicJwk, 'kty' | 'crv' | 'x' | 'y'>), kid, alg: algorithm, use: 'sig' }
}

/**
 * The keys of a service that signs with `privateKey` and also accepts `previousPublicKeys` (rotation). Every key must
 * fit `algorithm` (the loader below says which does not).
 */
export async function createAccessTokenKeys(
  algorithm: AsymmetricAlgorithm,
  privateKey: KeyObject,
  previousPublicKeys: readonly KeyObject[] = [],
): Promise<AccessTokenKeys> {
  const publicKeys = [createPublicKey(privateKey), ...previousPublicKeys]
  if (!publicKeys.every((key) => keyFitsAlgorithm(algorithm, key))) {
    throw new TypeError(`every access-token key must be ${KEY_KIND[algorithm]} for ${algorithm}`)
  }
  const keys = await Promise.all(publicKeys.map((key) => publicJwk(algorithm, key)))
  const kid = (keys[0] as PublicJwk).kid
  const ring = createKeyRing(
    algorithm,
    createSignatureSigner(algorithm, privateKey, kid),
    publicKeys.map((key, index) => ({ kid: (keys[index] as PublicJwk).kid, key })),
  )
  return { algorithm, kid, jwks: { keys }, sign: ring.sign, verifierFor: ring.verifierFor }
}

/** A new key pair for `algorithm`: Ed25519 for EdDSA, P-256 for ES256. */
export function generateAccessTokenKeyPair(algorithm: AsymmetricAlgorithm): {
  privateKey: KeyObject
  publicKey: KeyObject
} {
  return algorithm === 'EdDSA'
    ? generateKeyPairSync('ed25519')
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
}

/** A private key as AUTH_JWT_PRIVATE_KEY_FILE holds it: PEM, PKCS#8. */
export const privateKeyPem = (key: KeyObject): string =>
  key.export({ type: 'pkcs8', format: 'pem' }) as string

/**
 * A public key as AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES hold them (PEM, SubjectPublicKeyInfo); of a private key, its
 * public half.
 */
export const publicKeyPem = (key: KeyObject): string =>
  (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'pem' }) as string

const PRIVATE = 'AUTH_JWT_PRIVATE_KEY_FILE'
const PREVIOUS = 'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES'

/**
 * AUTH_JWT_ALGORITHM's keys, read at start: null for HS256. The signing key is AUTH_JWT_PRIVATE_KEY_FILE, or outside
 * production, when that is unset, a key pair generated once and kept in DATA_DIR (`jwt-eddsa-key.pem` or
 * `jwt-es256-key.pem`, 0600) like the development secret, so tokens survive a restart. A file that cannot be read,
 * is not a PEM key of the right kind, or repeats a key is a ConfigError naming the variable (and the entry), never
 * quoting the file's content.
 */
export async function loadAccessTokenKeys(config: {
  signing: SigningConfig
  storage: { dataDir: string }
}): Promise<AccessTokenKeys | null> {
  const { algorithm, privateKeyFile, previousPublicKeyFiles } = config.signing
  if (algorithm === 'HS256') return null
  let privateKey: KeyObject
  if (privateKeyFile === null) privateKey = await developmentKey(algorithm, config.storage.dataDir)
  else {
    const text = await readKeyFile(PRIVATE, '', privateKeyFile)
    privateKey = keyOrConfigError(PRIVATE, '', parsePrivateKey(algorithm, text))
  }
  const previous: KeyObject[] = []
  for (const [index, file] of previousPublicKeyFiles.entries()) {
    const entry = `entry ${index + 1} `
    const text = await readKeyFile(PREVIOUS, entry, file)
    previous.push(keyOrConfigError(PREVIOUS, entry, parsePublicKey(algorithm, text)))
  }
  const keys = await createAccessTokenKeys(algorithm, privateKey, previous)
  // a key listed twice would be served twice under one kid, which clients take for a broken JWKS
  keys.jwks.keys.forEach((jwk, index) => {
    const first = keys.jwks.keys.findIndex((other) => other.kid === jwk.kid)
    if (first === index) return
    const twin = first === 0 ? `the public key of ${PRIVATE}` : `the same key as entry ${first}`
    throw new ConfigError(PREVIOUS, `entry ${index} is ${twin}`)
  })
  return keys
}

/** The development signing key of `algorithm` in `dataDir`, created on first start. */
async function developmentKey(algorithm: AsymmetricAlgorithm, dataDir: string): Promise<KeyObject> {
  const file = join(dataDir, `jwt-${algorithm.toLowerCase()}-key.pem`)
  try {
    // another process starting at the same moment may have been first: its key is the one kept
    const pem = await readOrCreateFileOnce(file, () =>
      privateKeyPem(generateAccessTokenKeyPair(algorithm).privateKey),
    )
    return keyOrError(parsePrivateKey(algorithm, pem))
  } catch (error) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot hold the development signing key ${file}: ${(error as Error).message}; delete it to renew`,
    )
  }
}

async function readKeyFile(variable: string, entry: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new ConfigError(
      variable,
      `${entry}cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'} ${file}`,
    )
  }
}

/** What a key file holds that it should not: the problem, said without the variable's name. */
interface KeyProblem {
  problem: string
}

function keyOrConfigError(variable: string, entry: string, parsed: KeyObject | KeyProblem): KeyObject {
  if ('problem' in parsed) throw new ConfigError(variable, `${entry}${parsed.problem}`)
  return parsed
}

/** Throws the problem as a plain Error, for a caller that says where the key was itself. */
function keyOrError(parsed: KeyObject | KeyProblem): KeyObject {
  if ('problem' in parsed) throw new Error(parsed.problem)
  return parsed
}

/** A PKCS#8 PEM private key of `algorithm`'s curve. */
function parsePrivateKey(algorithm: AsymmetricAlgorithm, pem: string): KeyObject | KeyProblem {
  if (!pem.includes('-----BEGIN PRIVATE KEY-----')) {
    return {
      problem:
        'does not hold a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----, as tessera keys generate and openssl genpkey write it)',
    }
  }
  let key: KeyObject
  try {
    key = createPrivateKey({ key: pem, format: 'pem' })
  } catch (error) {
    return { problem: `does not hold a PKCS#8 PEM private key: ${(error as Error).message}` }
  }
  return fitting(algorithm, key)
}

/**
 * A PEM public key (SubjectPublicKeyInfo) of `algorithm`'s curve. A private key is refused, though Node would derive
 * the public half from it: a previous key is published and copied around, so it must never hold the secret half.
 */
function parsePublicKey(algorithm: AsymmetricAlgorithm, pem: string): KeyObject | KeyProblem {
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem)) {
    return {
      problem:
        'holds a private key: give its public key alone (tessera keys generate writes it beside the private key; openssl pkey -pubout derives it)',
    }
  }
  if (!pem.includes('-----BEGIN PUBLIC KEY-----')) {
    return { problem: 'does not hold a PEM public key (-----BEGIN PUBLIC KEY-----)' }
  }
  let key: KeyObject
  try {
    key = createPublicKey({ key: pem, format: 'pem' })
  } catch (error) {
    return { problem: `does not hold a PEM public key: ${(error as Error).message}` }
  }
  return fitting(algorithm, key)
}

function fitting(algorithm: AsymmetricAlgorithm, key: KeyObject): KeyObject | KeyProblem {
  if (keyFitsAlgorithm(algorithm, key)) return key
  const curve = key.asymmetricKeyDetails?.namedCurve
  return {
    problem: `holds a key of type ${key.asymmetricKeyType ?? key.type}${curve === undefined ? '' : ` (${curve})`}; AUTH_JWT_ALGORITHM=${algorithm} needs ${KEY_KIND[algorithm]}`,
  }
}
