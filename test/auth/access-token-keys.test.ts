import {
  createHash,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  verify,
} from 'node:crypto'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { importJWK, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  type AccessTokenKeys,
  createAccessTokenKeys,
  generateAccessTokenKeyPair,
  loadAccessTokenKeys,
  privateKeyPem,
  publicKeyPem,
} from '../../src/auth/access-token-keys.js'
import { encodedHeader } from '../../src/auth/access-token-signature.js'
import { createTokenService, type TokenSettings } from '../../src/auth/token-service.js'
import { createFixedClock } from '../../src/clock.js'
import type { AsymmetricAlgorithm, SigningConfig } from '../../src/config/signing-config.js'
import { ConfigError } from '../../src/config.js'
import { AccessTokenInvalidError, TokenWrongTypeError } from '../../src/errors.js'
import { useTempDir } from '../support/temp-dir.js'

const SECRET = 'current-secret-current-secret-00'
const USER = '4821039576'
const ALGORITHMS: readonly AsymmetricAlgorithm[] = ['EdDSA', 'ES256']
/** The order of P-256: an ES256 signature's s and n − s are both valid ECDSA. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const partsOf = (token: string) => {
  const [header = '', payload = '', signature = ''] = token.split('.')
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()),
    signature: Buffer.from(signature, 'base64url'),
  }
}

/** RFC 7638 by hand: the SHA-256 of the required members in lexicographic order, without whitespace. */
function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' })
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url')
}

const settingsWith = (keys: AccessTokenKeys | null, extra: Partial<TokenSettings> = {}): TokenSettings => ({
  secret: SECRET,
  previousSecrets: [],
  accessTokenTtlSeconds: 900,
  refreshTokenTtlSeconds: 604_800,
  accessTokenKeys: keys,
  ...extra,
})

/** An HS256 token signed with `secret` by hand, whatever its header says. */
function hs256(header: object, claims: object, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

describe.each(ALGORITHMS)('access-token keys, %s', (algorithm) => {
  const make = async (previous: KeyObject[] = []) => {
    const pair = generateAccessTokenKeyPair(algorithm)
    return { pair, keys: await createAccessTokenKeys(algorithm, pair.privateKey, previous) }
  }

  it("names each key by its RFC 7638 thumbprint, and serves public JWKs with kid, alg and use 'sig'", async () => {
    const old = generateAccessTokenKeyPair(algorithm)
    const { pair, keys } = await make([old.publicKey])
    expect(keys.kid).toBe(thumbprint(pair.publicKey))
    const curve = algorithm === 'EdDSA' ? { kty: 'OKP', crv: 'Ed25519' } : { kty: 'EC', crv: 'P-256' }
    expect(keys.jwks.keys).toEqual(
      [
        { ...curve, x: expect.any(String), ...(algorithm === 'ES256' ? { y: expect.any(String) } : {}) },
        { ...curve, x: expect.any(String), ...(algorithm === 'ES256' ? { y: expect.any(String) } : {}) },
      ].map((jwk, index) => ({
        ...jwk,
        kid: thumbprint(index === 0 ? pair.publicKey : old.publicKey),
        alg: algorithm,
        use: 'sig',
      })),
    )
    // nothing private is published: no d, and the JWK is the public key itself
    for (const jwk of keys.jwks.keys) expect(jwk).not.toHaveProperty('d')
    const served = createPublicKey({ key: { ...keys.jwks.keys[0] }, format: 'jwk' })
    expect(served.equals(pair.publicKey)).toBe(true)
  })

  it('signs with the header {alg, typ, kid}, a signature node:crypto and jose verify with the public key alone', async () => {
    const { pair, keys } = await make()
    const claims = { sub: USER, token_type: 'Access', iat: 1_700_000_000, exp: 1_700_000_900, jti: 'j' }
    const token = keys.sign(claims)
    const [header, payload, signature] = token.split('.') as [string, string, string]
    expect(header).toBe(b64({ alg: algorithm, typ: 'JWT', kid: keys.kid }))
    expect(payload).toBe(b64(claims))
    const input = Buffer.from(`${header}.${payload}`)
    const options =
      algorithm === 'EdDSA' ? pair.publicKey : { key: pair.publicKey, dsaEncoding: 'ieee-p1363' as const }
    expect(
      verify(algorithm === 'EdDSA' ? null : 'sha256', input, options, Buffer.from(signature, 'base64url')),
    ).toBe(true)
    const key = await importJWK(keys.jwks.keys[0] as object, algorithm)
    const verified = await jwtVerify(token, key, {
      algorithms: [algorithm],
      currentDate: new Date(1_700_000_100_000),
    })
    expect(verified.payload).toEqual(claims)
    expect(verified.protectedHeader).toEqual({ alg: algorithm, typ: 'JWT', kid: keys.kid })
  })

  it('checks a token with the one key its exact header names, and no other header', async () => {
    const old = generateAccessTokenKeyPair(algorithm)
    const { keys } = await make([old.publicKey])
    const oldKeys = await createAccessTokenKeys(algorithm, old.privateKey)
    const claims = { sub: USER }
    const token = keys.sign(claims)
    expect(keys.verifierFor(token)?.(token)).toEqual(claims)
    // a token of the previous key goes to that key
    const previous = oldKeys.sign(claims)
    expect(keys.verifierFor(previous)?.(previous)).toEqual(claims)
    // the signature of one key under the header of the other fails that key's check
    const swapped = `${encodedHeader(algorithm, keys.kid)}.${previous.split('.').slice(1).join('.')}`
    expect(keys.verifierFor(swapped)?.(swapped)).toBeNull()
    const rest = token.slice(token.indexOf('.'))
    for (const header of [
      { alg: 'none', typ: 'JWT', kid: keys.kid },
      { alg: 'HS256', typ: 'JWT', kid: keys.kid },
      { alg: 'RS256', typ: 'JWT', kid: keys.kid },
      { alg: algorithm === 'EdDSA' ? 'ES256' : 'EdDSA', typ: 'JWT', kid: keys.kid },
      { alg: algorithm, typ: 'JWT', kid: 'unknown' },
      { alg: algorithm, typ: 'JWT' },
      { typ: 'JWT', alg: algorithm, kid: keys.kid },
      { alg: algorithm, typ: 'JWT', kid: keys.kid, jku: 'https://attacker.example/jwks.json' },
    ]) {
      expect(keys.verifierFor(`${b64(header)}${rest}`), JSON.stringify(header)).toBeUndefined()
    }
    expect(keys.verifierFor('no-dot-at-all')).toBeUndefined()
  })
})

describe('ES256 signatures', () => {
  it('carry the low s, and the high-s twin of a token, valid ECDSA though it is, is refused: one token, one text', async () => {
    const { privateKey, publicKey } = generateAccessTokenKeyPair('ES256')
    const keys = await createAccessTokenKeys('ES256', privateKey)
    const half = P256_ORDER >> 1n
    let checked = 0
    for (let i = 0; i < 32; i++) {
      const token = keys.sign({ sub: USER, i })
      const [input, signature] = [token.slice(0, token.lastIndexOf('.')), partsOf(token).signature]
      const s = BigInt(`0x${signature.subarray(32).toString('hex')}`)
      expect(s <= half).toBe(true)
      const twin = Buffer.concat([
        signature.subarray(0, 32),
        Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex'),
      ])
      // node:crypto accepts both: the refusal is the checker's own rule
      const key = { key: publicKey, dsaEncoding: 'ieee-p1363' as const }
      expect(verify('sha256', Buffer.from(input), key, twin)).toBe(true)
      const altered = `${input}.${twin.toString('base64url')}`
      expect(keys.verifierFor(altered)?.(altered)).toBeNull()
      expect(keys.verifierFor(token)?.(token)).toEqual({ sub: USER, i })
      checked++
    }
    expect(checked).toBe(32)
  })
})

describe.each(ALGORITHMS)('the token service with %s access tokens', (algorithm) => {
  const setUp = async (extra: Partial<TokenSettings> = {}) => {
    const { privateKey } = generateAccessTokenKeyPair(algorithm)
    const keys = await createAccessTokenKeys(algorithm, privateKey)
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    return { keys, clock, tokens: createTokenService(settingsWith(keys, extra), clock) }
  }

  it('signs access tokens with the key and refresh tokens with the secret, as before', async () => {
    const { keys, tokens, clock } = await setUp()
    const pair = tokens.issuePair(USER)
    expect(partsOf(pair.accessToken).header).toEqual({ alg: algorithm, typ: 'JWT', kid: keys.kid })
    expect(partsOf(pair.refreshToken).header).toEqual({ alg: 'HS256', typ: 'JWT' })
    // the refresh token is byte for byte the HS256 token of its claims
    expect(pair.refreshToken).toBe(hs256({ alg: 'HS256', typ: 'JWT' }, partsOf(pair.refreshToken).payload))
    const now = Math.floor(clock.now() / 1000)
    expect(partsOf(pair.accessToken).payload).toEqual({
      sub: USER,
      token_type: 'Access',
      iat: now,
      exp: now + 900,
      jti: expect.any(String),
    })
    expect(tokens.verifyAccess(pair.accessToken)).toBe(USER)
    expect(tokens.verifyRefresh(pair.refreshToken)).toBe(USER)
    expect(() => tokens.verifyAccess(pair.refreshToken)).toThrow(TokenWrongTypeError)
    expect(() => tokens.verifyRefresh(pair.accessToken)).toThrow(TokenWrongTypeError)
  })

  it('refuses an HS256 access token, even one signed with AUTH_JWT_SECRET, and one of a previous secret', async () => {
    const { tokens, clock } = await setUp({ previousSecrets: ['previous-secret-previous-secret-0'] })
    const now = Math.floor(clock.now() / 1000)
    const claims = { sub: USER, token_type: 'Access', iat: now, exp: now + 900, jti: 'a' }
    // the same claims and secret make a valid token for a service in HS256 mode
    const hsService = createTokenService(settingsWith(null), clock)
    const forged = hs256({ alg: 'HS256', typ: 'JWT' }, claims)
    expect(hsService.verifyAccess(forged)).toBe(USER)
    expect(() => tokens.verifyAccess(forged)).toThrow(AccessTokenInvalidError)
    const byPrevious = hs256({ alg: 'HS256', typ: 'JWT' }, claims, 'previous-secret-previous-secret-0')
    expect(() => tokens.verifyAccess(byPrevious)).toThrow(AccessTokenInvalidError)
  })

  it('refuses headers naming none, HS256, RS256 or an unknown kid, whatever the signature', async () => {
    const { keys, tokens } = await setUp()
    const valid = tokens.issuePair(USER).accessToken
    const [, payload, signature] = valid.split('.')
    for (const header of [
      { alg: 'none', typ: 'JWT', kid: keys.kid },
      { alg: 'HS256', typ: 'JWT', kid: keys.kid },
      { alg: 'RS256', typ: 'JWT', kid: keys.kid },
      { alg: algorithm, typ: 'JWT', kid: 'some-other-kid' },
    ]) {
      const token = `${b64(header)}.${payload}.${signature}`
      expect(() => tokens.verifyAccess(token), JSON.stringify(header)).toThrow(AccessTokenInvalidError)
    }
    expect(() => tokens.verifyAccess(`${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`)).toThrow(
      AccessTokenInvalidError,
    )
    // an HS256 header with an HMAC under the secret over the same claims: refused too
    const hmac = hs256({ alg: 'HS256', typ: 'JWT', kid: keys.kid }, partsOf(valid).payload)
    expect(() => tokens.verifyAccess(hmac)).toThrow(AccessTokenInvalidError)
  })

  it('refuses a refresh token signed with the access key: no configuration issues one', async () => {
    const { keys, tokens, clock } = await setUp()
    const now = Math.floor(clock.now() / 1000)
    const refresh = keys.sign({ sub: USER, token_type: 'Refresh', iat: now, exp: now + 60, jti: 'r' })
    expect(() => tokens.verifyRefresh(refresh)).toThrow()
    expect(() => tokens.verifyAccess(refresh)).toThrow(AccessTokenInvalidError)
  })

  it('accepts a token of a previous key (rotation) until its exp, and refuses one of a key it does not hold', async () => {
    const old = generateAccessTokenKeyPair(algorithm)
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    const before = createTokenService(
      settingsWith(await createAccessTokenKeys(algorithm, old.privateKey)),
      clock,
    )
    const earlier = before.issuePair(USER).accessToken
    const { privateKey } = generateAccessTokenKeyPair(algorithm)
    const rotated = await createAccessTokenKeys(algorithm, privateKey, [old.publicKey])
    const after = createTokenService(settingsWith(rotated), clock)
    expect(after.verifyAccess(earlier)).toBe(USER)
    const withoutOld = createTokenService(
      settingsWith(await createAccessTokenKeys(algorithm, privateKey)),
      clock,
    )
    expect(() => withoutOld.verifyAccess(earlier)).toThrow(AccessTokenInvalidError)
    clock.advance(900_000)
    const fresh = createTokenService(settingsWith(rotated), clock)
    expect(() => fresh.verifyAccess(earlier)).toThrow(AccessTokenInvalidError)
  })

  it('with AUTH_JWT_ISSUER, access tokens carry iss and must; refresh tokens do not', async () => {
    const { keys, tokens, clock } = await setUp({ issuer: 'https://auth.example.com' })
    const pair = tokens.issuePair(USER)
    expect(partsOf(pair.accessToken).payload.iss).toBe('https://auth.example.com')
    expect(partsOf(pair.refreshToken).payload).not.toHaveProperty('iss')
    expect(tokens.verifyAccess(pair.accessToken)).toBe(USER)
    expect(tokens.verifyRefresh(pair.refreshToken)).toBe(USER)
    const now = Math.floor(clock.now() / 1000)
    const claims = { sub: USER, token_type: 'Access', iat: now, exp: now + 900, jti: 'a' }
    expect(() => tokens.verifyAccess(keys.sign(claims))).toThrow(AccessTokenInvalidError)
    expect(() => tokens.verifyAccess(keys.sign({ ...claims, iss: 'https://other.example' }))).toThrow(
      AccessTokenInvalidError,
    )
    expect(tokens.verifyAccess(keys.sign({ ...claims, iss: 'https://auth.example.com' }))).toBe(USER)
  })
})

describe('HS256, the default', () => {
  it('issues the tokens of before, byte for byte; AUTH_JWT_ISSUER adds iss to access tokens alone', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    const tokens = createTokenService(settingsWith(null), clock)
    const pair = tokens.issuePair(USER)
    for (const token of [pair.accessToken, pair.refreshToken]) {
      expect(token).toBe(hs256({ alg: 'HS256', typ: 'JWT' }, partsOf(token).payload))
      expect(Object.keys(partsOf(token).payload)).toEqual(['sub', 'token_type', 'iat', 'exp', 'jti'])
    }
    const withIssuer = createTokenService(settingsWith(null, { issuer: 'tessera' }), clock)
    const issued = withIssuer.issuePair(USER)
    expect(partsOf(issued.accessToken).payload.iss).toBe('tessera')
    expect(partsOf(issued.refreshToken).payload).not.toHaveProperty('iss')
    expect(withIssuer.verifyAccess(issued.accessToken)).toBe(USER)
    // an access token without it, issued before AUTH_JWT_ISSUER was set, is refused
    expect(() => withIssuer.verifyAccess(pair.accessToken)).toThrow(AccessTokenInvalidError)
  })
})

describe('loadAccessTokenKeys', () => {
  const temp = useTempDir('access-token-keys')
  const signing = (overrides: Partial<SigningConfig>): SigningConfig => ({
    algorithm: 'EdDSA',
    privateKeyFile: null,
    previousPublicKeyFiles: [],
    issuer: null,
    ...overrides,
  })
  const load = (overrides: Partial<SigningConfig>, dataDir = join(temp.path, 'unused')) =>
    loadAccessTokenKeys({ signing: signing(overrides), storage: { dataDir } })
  const refusal = async (overrides: Partial<SigningConfig>) => {
    const error = await load(overrides).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }

  it('is null with HS256: no key, no file', async () => {
    expect(await load({ algorithm: 'HS256' })).toBeNull()
  })

  it('reads AUTH_JWT_PRIVATE_KEY_FILE and the previous public keys, the signing key first in the JWKS', async () => {
    const current = generateAccessTokenKeyPair('ES256')
    const old = generateAccessTokenKeyPair('ES256')
    const keys = await load({
      algorithm: 'ES256',
      privateKeyFile: await temp.file('es256.pem', privateKeyPem(current.privateKey)),
      previousPublicKeyFiles: [await temp.file('es256-old.pub.pem', publicKeyPem(old.privateKey))],
    })
    expect(keys?.kid).toBe(thumbprint(current.publicKey))
    expect(keys?.jwks.keys.map((jwk) => jwk.kid)).toEqual([
      thumbprint(current.publicKey),
      thumbprint(old.publicKey),
    ])
  })

  it.each(ALGORITHMS)(
    'in development, makes a %s key pair once in DATA_DIR (0600) and keeps it',
    async (algorithm) => {
      const dataDir = join(temp.path, `data-${algorithm}`)
      const first = await load({ algorithm }, dataDir)
      const second = await load({ algorithm }, dataDir)
      expect(second?.kid).toBe(first?.kid)
      const file = join(dataDir, `jwt-${algorithm.toLowerCase()}-key.pem`)
      expect((await stat(file)).mode & 0o777).toBe(0o600)
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700)
      // the other algorithm's pair is a file of its own: switching does not meet a key of the wrong kind
      const other = await load({ algorithm: algorithm === 'EdDSA' ? 'ES256' : 'EdDSA' }, dataDir)
      expect(other?.kid).not.toBe(first?.kid)
    },
  )

  it('names the variable and the problem, never the content, for a key file it cannot use', async () => {
    const ed = generateAccessTokenKeyPair('EdDSA')
    const ec = generateAccessTokenKeyPair('ES256')
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
    const missing = join(temp.path, 'missing.pem')
    expect(await refusal({ privateKeyFile: missing })).toBe(
      `AUTH_JWT_PRIVATE_KEY_FILE cannot be read: ENOENT ${missing}`,
    )
    const pkcs8 =
      'AUTH_JWT_PRIVATE_KEY_FILE does not hold a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----, as tessera keys generate and openssl genpkey write it)'
    expect(
      await refusal({ privateKeyFile: await temp.file('public.pem', publicKeyPem(ed.privateKey)) }),
    ).toBe(pkcs8)
    const sec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string
    expect(await refusal({ algorithm: 'ES256', privateKeyFile: await temp.file('sec1.pem', sec1) })).toBe(
      pkcs8,
    )
    const broken = await temp.file(
      'broken.pem',
      '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
    )
    expect(await refusal({ privateKeyFile: broken })).toMatch(
      /^AUTH_JWT_PRIVATE_KEY_FILE does not hold a PKCS#8 PEM private key: /,
    )
    expect(await refusal({ privateKeyFile: await temp.file('ec.pem', privateKeyPem(ec.privateKey)) })).toBe(
      'AUTH_JWT_PRIVATE_KEY_FILE holds a key of type ec (prime256v1); AUTH_JWT_ALGORITHM=EdDSA needs an Ed25519 key',
    )
    expect(
      await refusal({
        algorithm: 'ES256',
        privateKeyFile: await temp.file('rsa.pem', privateKeyPem(rsa.privateKey)),
      }),
    ).toBe('AUTH_JWT_PRIVATE_KEY_FILE holds a key of type rsa; AUTH_JWT_ALGORITHM=ES256 needs a P-256 key')

    const edFile = await temp.file('ed.pem', privateKeyPem(ed.privateKey))
    const previous = async (...texts: string[]) =>
      refusal({
        privateKeyFile: edFile,
        previousPublicKeyFiles: await Promise.all(
          texts.map((text, i) => temp.file(`previous-${i}.pem`, text)),
        ),
      })
    const otherEd = publicKeyPem(generateAccessTokenKeyPair('EdDSA').privateKey)
    expect(await previous(otherEd, privateKeyPem(ed.privateKey))).toBe(
      'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 2 holds a private key: give its public key alone (tessera keys generate writes it beside the private key; openssl pkey -pubout derives it)',
    )
    expect(await previous('not a key')).toBe(
      'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 1 does not hold a PEM public key (-----BEGIN PUBLIC KEY-----)',
    )
    expect(await previous(publicKeyPem(p384.privateKey))).toBe(
      'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 1 holds a key of type ec (secp384r1); AUTH_JWT_ALGORITHM=EdDSA needs an Ed25519 key',
    )
    expect(await previous(otherEd, publicKeyPem(ed.privateKey))).toBe(
      'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 2 is the public key of AUTH_JWT_PRIVATE_KEY_FILE',
    )
    expect(await previous(otherEd, otherEd)).toBe(
      'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 2 is the same key as entry 1',
    )
    const unreadable = join(temp.path, 'nowhere.pub.pem')
    expect(await refusal({ privateKeyFile: edFile, previousPublicKeyFiles: [unreadable] })).toBe(
      `AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES entry 1 cannot be read: ENOENT ${unreadable}`,
    )
  })

  it('refuses a development key file that is not a key of the algorithm, naming DATA_DIR', async () => {
    const dataDir = join(temp.path, 'data-broken')
    await load({ algorithm: 'ES256' }, dataDir)
    const { writeFile } = await import('node:fs/promises')
    await writeFile(
      join(dataDir, 'jwt-es256-key.pem'),
      privateKeyPem(generateAccessTokenKeyPair('EdDSA').privateKey),
    )
    const error = await load({ algorithm: 'ES256' }, dataDir).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('DATA_DIR')
    expect((error as ConfigError).message).toContain('jwt-es256-key.pem')
  })
})
