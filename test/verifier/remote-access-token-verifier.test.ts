import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AccessTokenKeys,
  createAccessTokenKeys,
  generateAccessTokenKeyPair,
  type PublicJwk,
  privateKeyPem,
} from '../../src/auth/access-token-keys.js'
import { createHs256Signer } from '../../src/auth/hs256-signer.js'
import { createTokenService } from '../../src/auth/token-service.js'
import { createFixedClock } from '../../src/clock.js'
import {
  AppError,
  type AuthenticatedRequest,
  accessTokenPlugin,
  ConfigError,
  createAccessTokenMiddleware,
  createAccessTokenVerifier,
  type RemoteAccessTokenVerifier,
} from '../../src/index.js'
import { bearer, call, decodeJwt, type Registered, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { useTempDir } from '../support/temp-dir.js'
import { apiPath, startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'
import { CHALLENGE, sqlite } from './minted-tokens.js'

// docs/api.md R5.9.5: createAccessTokenVerifier({ jwksUrl }) checks the tokens of a service with AUTH_JWT_ALGORITHM
// EdDSA or ES256 by the keys it publishes, with the service's own checks, fetching the set again for an unknown kid

/** What a verification rejected with, as the fields a caller answers with; fails when it resolved. */
async function refusalOf(verification: Promise<unknown>) {
  const error = await verification.then(
    () => {
      throw new Error('the verifier accepted the token')
    },
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  const { statusCode, code, message, headers } = error as AppError
  return { statusCode, code, message, challenge: headers['www-authenticate'] }
}

const INVALID = {
  statusCode: 401,
  code: 'access_token_invalid',
  message: MESSAGES.accessTokenInvalid,
  challenge: CHALLENGE.invalidToken,
}
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('createAccessTokenVerifier({ jwksUrl }) against a running EdDSA service', () => {
  const temp = useTempDir('remote-verifier')
  const clock = createFixedClock(Date.now())
  let service: TestService
  let jwksUrl: string
  let user: Registered
  let verifier: RemoteAccessTokenVerifier
  beforeAll(async () => {
    const keyFile = await temp.file('key.pem', privateKeyPem(generateAccessTokenKeyPair('EdDSA').privateKey))
    service = await startTestService(sqlite, {
      clock,
      env: {
        AUTH_JWT_ALGORITHM: 'EdDSA',
        AUTH_JWT_PRIVATE_KEY_FILE: keyFile,
        AUTH_JWT_ISSUER: 'tessera-test',
      },
    })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = service.app.server.address() as AddressInfo
    jwksUrl = `http://127.0.0.1:${port}${apiPath('/.well-known/jwks.json')}`
    user = await registerUser(service.app)
    verifier = createAccessTokenVerifier({ jwksUrl, issuer: 'tessera-test', clock })
  })
  afterAll(() => service?.close())

  it('R5.9.5 a valid access token gives the id GET /auth/me names', async () => {
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    expect(await verifier.verify(`Bearer ${user.accessToken}`)).toEqual({
      userId: me.body.data.id,
      role: 'user',
    })
    expect(await verifier.verifyToken(user.accessToken)).toEqual({ userId: user.id, role: 'user' })
  })

  it('R5.9.5 refuses as the service does: no header, a malformed one, a tampered token, an HS256 one, other headers', async () => {
    expect(await refusalOf(verifier.verify(undefined))).toMatchObject({ code: 'authorization_missing' })
    expect(await refusalOf(verifier.verify(`bearer ${user.accessToken}`))).toMatchObject({
      code: 'authorization_malformed',
      challenge: CHALLENGE.bare,
    })
    const [header, payload, signature] = user.accessToken.split('.') as [string, string, string]
    const { claims } = decodeJwt(user.accessToken)
    const { kid } = decodeJwt(user.accessToken).header
    const tampered = `${header}.${encode({ ...claims, sub: '1000000001' })}.${signature}`
    const hs256 = createHs256Signer(TEST_SECRET)(claims)
    const others = [
      { alg: 'none', typ: 'JWT', kid },
      { alg: 'HS256', typ: 'JWT', kid },
      { alg: 'RS256', typ: 'JWT', kid },
      { alg: 'ES256', typ: 'JWT', kid },
      { alg: 'EdDSA', typ: 'JWT', kid: 'unknown' },
      { kid, alg: 'EdDSA', typ: 'JWT' },
    ].map((other) => `${encode(other)}.${payload}.${signature}`)
    for (const token of [tampered, hs256, 'x.y.z', ...others]) {
      // the service refuses it with the same 401
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(token) })
      expect(me.body.message, token).toBe(MESSAGES.accessTokenInvalid)
      expect(await refusalOf(verifier.verify(`Bearer ${token}`)), token).toEqual(INVALID)
    }
  })

  it('R5.9.5 a refresh token is invalid here: it is signed with the secret the verifier does not hold', async () => {
    expect(await refusalOf(verifier.verify(`Bearer ${user.refreshToken}`))).toEqual(INVALID)
  })

  it('R5.9.5 checks exp with no leeway on its clock, and iss when given', async () => {
    const { exp } = decodeJwt(user.accessToken).claims
    const late = createFixedClock(exp * 1000 - 1)
    const onItsClock = createAccessTokenVerifier({ jwksUrl, clock: late })
    expect(await onItsClock.verifyToken(user.accessToken)).toEqual({ userId: user.id, role: 'user' })
    late.advance(1)
    expect(await refusalOf(onItsClock.verifyToken(user.accessToken))).toEqual(INVALID)
    const otherIssuer = createAccessTokenVerifier({ jwksUrl, issuer: 'someone-else', clock })
    expect(await refusalOf(otherIssuer.verifyToken(user.accessToken))).toEqual(INVALID)
  })

  it('R5.9.4 guards a Fastify scope: the route runs for a valid token, a refusal is the service’s 401', async () => {
    const app = Fastify()
    app.register(async (api) => {
      await api.register(accessTokenPlugin, { jwksUrl, clock })
      api.get('/orders', async (request) => ({ owner: request.userId }))
    })
    try {
      const ok = await app.inject({ url: '/orders', headers: bearer(user.accessToken) })
      expect(ok.json()).toEqual({ owner: user.id })
      const refused = await app.inject({ url: '/orders', headers: bearer(user.refreshToken) })
      expect(refused.statusCode).toBe(401)
      expect(refused.json()).toEqual({ code: 401, message: MESSAGES.accessTokenInvalid, data: null })
      expect(refused.headers['www-authenticate']).toBe(CHALLENGE.invalidToken)
    } finally {
      await app.close()
    }
  })

  it('R5.9.4 guards a node:http (Express) handler: next() with req.userId, or the 401 answered', async () => {
    const middleware = createAccessTokenMiddleware({ jwksUrl, clock })
    const server: Server = createServer((req: IncomingMessage, res: ServerResponse) =>
      middleware(req, res, (error) => {
        res.writeHead(error === undefined ? 200 : 500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ owner: (req as AuthenticatedRequest).userId }))
      }),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`
    try {
      const ok = await fetch(url, { headers: bearer(user.accessToken) })
      expect(await ok.json()).toEqual({ owner: user.id })
      const refused = await fetch(url, { headers: bearer('x.y.z') })
      expect(refused.status).toBe(401)
      expect(await refused.json()).toEqual({ code: 401, message: MESSAGES.accessTokenInvalid, data: null })
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

/** A key set served from a variable, counting the fetches: a service's JWKS, under the test's control. */
async function servedKeySet() {
  let keys: readonly PublicJwk[] = []
  let fetches = 0
  const server = createServer((_req, res) => {
    fetches += 1
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    serve(...sets: AccessTokenKeys[]) {
      keys = sets.flatMap((set) => set.jwks.keys)
    },
    fetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('R5.9.5 the key set: kept, fetched again for an unknown kid, and its keys alone trusted', () => {
  const clock = createFixedClock(Date.now())
  let jwks: Awaited<ReturnType<typeof servedKeySet>>
  const keyPairs: Record<'a' | 'b' | 'c', AccessTokenKeys> = {} as never
  /** An access token for `user` signed with the key `name`, as a service with that key issues it. */
  const tokenOf = (name: 'a' | 'b' | 'c', user = '1000000001') =>
    createTokenService(
      {
        secret: TEST_SECRET,
        previousSecrets: [],
        accessTokenTtlSeconds: 900,
        refreshTokenTtlSeconds: 604_800,
        accessTokenKeys: keyPairs[name],
      },
      clock,
    ).issuePair(user).accessToken
  beforeAll(async () => {
    for (const name of ['a', 'b', 'c'] as const) {
      keyPairs[name] = await createAccessTokenKeys('ES256', generateAccessTokenKeyPair('ES256').privateKey)
    }
    jwks = await servedKeySet()
  })
  afterAll(() => jwks?.close())

  it('fetches once, keeps the set, and fetches again when a token names a key it does not hold (a rotation)', async () => {
    jwks.serve(keyPairs.a)
    const verifier = createAccessTokenVerifier({ jwksUrl: jwks.url, jwksCooldownMs: 0, clock })
    const before = jwks.fetches()
    expect(await verifier.verifyToken(tokenOf('a'))).toEqual({ userId: '1000000001', role: 'user' })
    expect(await verifier.verifyToken(tokenOf('a', '1000000002'))).toEqual({
      userId: '1000000002',
      role: 'user',
    })
    expect(jwks.fetches() - before).toBe(1)
    // the service rotates: the next key published beside the current one
    jwks.serve(keyPairs.b, keyPairs.a)
    expect(await verifier.verifyToken(tokenOf('b'))).toEqual({ userId: '1000000001', role: 'user' })
    expect(jwks.fetches() - before).toBe(2)
    // a key the set does not hold after a fetch: refused
    expect(await refusalOf(verifier.verifyToken(tokenOf('c')))).toEqual(INVALID)
    expect(jwks.fetches() - before).toBe(3)
  })

  it('within the cooldown an unknown kid costs no fetch, and is refused', async () => {
    jwks.serve(keyPairs.a)
    const verifier = createAccessTokenVerifier({ jwksUrl: jwks.url, clock })
    await verifier.verifyToken(tokenOf('a'))
    const fetched = jwks.fetches()
    for (let i = 0; i < 5; i++) expect(await refusalOf(verifier.verifyToken(tokenOf('c')))).toEqual(INVALID)
    expect(jwks.fetches()).toBe(fetched)
  })

  it('a key dropped from the set verifies no new token once the set is fetched again', async () => {
    jwks.serve(keyPairs.a)
    const verifier = createAccessTokenVerifier({ jwksUrl: jwks.url, jwksCacheMaxAgeMs: 0, clock })
    expect(await verifier.verifyToken(tokenOf('a'))).toEqual({ userId: '1000000001', role: 'user' })
    jwks.serve(keyPairs.b)
    expect(await refusalOf(verifier.verifyToken(tokenOf('a', '1000000003')))).toEqual(INVALID)
  })

  it('a set that cannot be fetched is no refusal: the promise rejects with the failure, and a guard answers 500', async () => {
    const closed = await servedKeySet()
    await closed.close()
    const verifier = createAccessTokenVerifier({ jwksUrl: closed.url, clock })
    const failure = await verifier.verifyToken(tokenOf('a')).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    expect(failure).not.toBeInstanceOf(AppError)
    const app = Fastify({ logger: false })
    app.register(async (api) => {
      await api.register(accessTokenPlugin, { verifier })
      api.get('/orders', async () => ({ served: true }))
    })
    try {
      expect((await app.inject({ url: '/orders', headers: bearer(tokenOf('a')) })).statusCode).toBe(500)
    } finally {
      await app.close()
    }
  })

  it('R5.9.3 refuses settings it cannot use, naming the option', () => {
    const refused = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as ConfigError).message
      }
      throw new Error('accepted')
    }
    expect(refused(() => createAccessTokenVerifier({ jwksUrl: 'ftp://keys.example/jwks.json' }))).toBe(
      'jwksUrl must be an http or https URL, such as https://auth.example.com/.well-known/jwks.json',
    )
    expect(refused(() => createAccessTokenVerifier({ jwksUrl: 'not a url' }))).toMatch(/^jwksUrl must be/)
    expect(
      refused(() => createAccessTokenVerifier({ jwksUrl: jwks.url, secret: TEST_SECRET } as never)),
    ).toBe(
      'jwksUrl and secret exclude each other: a service signs access tokens with one or the other (AUTH_JWT_ALGORITHM)',
    )
    expect(
      refused(() => createAccessTokenVerifier({ jwksUrl: jwks.url, algorithms: ['HS256' as never] })),
    ).toBe('algorithms must list EdDSA, ES256 or both')
    expect(refused(() => createAccessTokenVerifier({ jwksUrl: jwks.url, algorithms: [] }))).toBe(
      'algorithms must list EdDSA, ES256 or both',
    )
    expect(refused(() => createAccessTokenVerifier({ jwksUrl: jwks.url, issuer: '' }))).toBe(
      'issuer must be the service’s AUTH_JWT_ISSUER, a non-empty string',
    )
    expect(refused(() => createAccessTokenVerifier({ jwksUrl: jwks.url, jwksCooldownMs: -1 }))).toBe(
      'jwksCooldownMs must be a number of milliseconds, 0 or more',
    )
  })

  it('algorithms pins what is accepted: an ES256 token is refused by a verifier of EdDSA alone, unfetched', async () => {
    jwks.serve(keyPairs.a)
    const before = jwks.fetches()
    const eddsaOnly = createAccessTokenVerifier({ jwksUrl: jwks.url, algorithms: ['EdDSA'], clock })
    expect(await refusalOf(eddsaOnly.verifyToken(tokenOf('a')))).toEqual(INVALID)
    expect(jwks.fetches()).toBe(before)
  })
})
