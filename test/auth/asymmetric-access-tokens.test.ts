import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateAccessTokenKeyPair, privateKeyPem, publicKeyPem } from '../../src/auth/access-token-keys.js'
import { createHs256Signer } from '../../src/auth/hs256-signer.js'
import { createFixedClock } from '../../src/clock.js'
import type { AsymmetricAlgorithm } from '../../src/config/signing-config.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, type Registered, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { useTempDir } from '../support/temp-dir.js'
import { apiPath, startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'

// Access tokens signed with EdDSA and ES256 (docs/api.md R2.3.2, R5.5.6 to R5.5.8, §4.13), checked by the service
// and by two implementations of JOSE that share nothing with it: jose in Node, against the JWKS the service serves
// over HTTP, and PyJWT in Python, as another service of the application would.

// the embedded store, which every machine has: how tokens are signed does not depend on the store
const sqlite = backends.find((backend) => backend.name === 'sqlite')!

/** Debian's /usr/bin/python3 with python3-jwt and python3-cryptography (.ci/run installs them). */
const PYTHON = '/usr/bin/python3'
const PYJWT_SCRIPT = fileURLToPath(new URL('../support/pyjwt_verify.py', import.meta.url))
const pyjwtMissing = !existsSync(PYTHON)
  ? `${PYTHON} does not exist`
  : spawnSync(PYTHON, ['-c', 'import jwt, cryptography'], { encoding: 'utf8' }).status !== 0
    ? `${PYTHON} cannot import jwt and cryptography`
    : null
if (pyjwtMissing !== null) {
  console.warn(
    `skipping the PyJWT checks: ${pyjwtMissing} (apt-get install python3-jwt python3-cryptography; .ci/run does)`,
  )
}

/** PyJWT's verdict on `token`: its claims, or its refusal. */
async function verifyWithPyJwt(
  jwksUrl: string,
  algorithm: string,
  token: string,
  issuer?: string,
): Promise<{ ok: true; claims: Record<string, unknown>; kid: string } | { ok: false; refusal: string }> {
  const args = [PYJWT_SCRIPT, jwksUrl, algorithm, token, ...(issuer === undefined ? [] : [issuer])]
  try {
    const { stdout } = await promisify(execFile)(PYTHON, args, { timeout: 20_000 })
    return { ok: true, ...JSON.parse(stdout) }
  } catch (error) {
    const failed = error as { code?: number; stderr?: string }
    if (failed.code !== 1) throw error
    return { ok: false, refusal: failed.stderr ?? '' }
  }
}

const ISSUER = 'https://auth.example.com'

describe.each(['EdDSA', 'ES256'] as const)('%s access tokens', (algorithm: AsymmetricAlgorithm) => {
  const temp = useTempDir(`asymmetric-${algorithm}`)
  const clock = createFixedClock(Date.now())

  /** A key pair written as `tessera keys generate` writes it: the private key, and its public key beside it. */
  const keyFiles = async (name: string) => {
    const { privateKey } = generateAccessTokenKeyPair(algorithm)
    return {
      privateFile: await temp.file(`${name}.pem`, privateKeyPem(privateKey)),
      publicFile: await temp.file(`${name}.pub.pem`, publicKeyPem(privateKey)),
    }
  }

  /**
   * The service with these variables, listening on a free port of 127.0.0.1, and its JWKS URL there; `instance`
   * (a database of its own) lets a restarted service find the accounts of the one before it.
   */
  const listening = async (env: Record<string, string>, instance?: BackendInstance) => {
    const service = await startTestService(sqlite, {
      clock,
      instance,
      env: { AUTH_JWT_ALGORITHM: algorithm, ...env },
    })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    const address = service.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    return { service, jwksUrl: `http://127.0.0.1:${address.port}${apiPath('/.well-known/jwks.json')}` }
  }

  describe('signed by a running service', () => {
    let service: TestService
    let jwksUrl: string
    let user: Registered
    beforeAll(async () => {
      const keys = await keyFiles('current')
      ;({ service, jwksUrl } = await listening({
        AUTH_JWT_PRIVATE_KEY_FILE: keys.privateFile,
        AUTH_JWT_ISSUER: ISSUER,
      }))
      user = await registerUser(service.app)
    })
    afterAll(() => service?.close())

    it('R2.3.2 carry {alg, typ, kid} and iss; /auth/me and refresh work as with HS256, the refresh token still HS256', async () => {
      const { header, claims } = decodeJwt(user.accessToken)
      const { keys } = (await call(service.app, 'GET', '/.well-known/jwks.json')).body
      expect(header).toEqual({ alg: algorithm, typ: 'JWT', kid: keys[0].kid })
      expect(claims).toMatchObject({ sub: user.id, token_type: 'Access', iss: ISSUER })
      expect(decodeJwt(user.refreshToken).header).toEqual({ alg: 'HS256', typ: 'JWT' })
      expect(decodeJwt(user.refreshToken).claims).not.toHaveProperty('iss')
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
      expect(me.status, me.text).toBe(200)
      const refreshed = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: user.refreshToken },
      })
      expect(refreshed.status, refreshed.text).toBe(200)
      expect(decodeJwt(refreshed.body.data.access_token).header.alg).toBe(algorithm)
      // a refresh token at /auth/me and an access token at /auth/refresh: each its wrong-type 401, as with HS256
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: bearer(refreshed.body.data.refresh_token) }),
        401,
        MESSAGES.tokenWrongType,
      )
      expectError(
        await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.accessToken } }),
        401,
        MESSAGES.tokenWrongType,
      )
    })

    it('R5.5.6 verify with jose against the JWKS the service serves, algorithm pinned and issuer checked', async () => {
      const jwks = createRemoteJWKSet(new URL(jwksUrl))
      const verified = await jwtVerify(user.accessToken, jwks, {
        algorithms: [algorithm],
        issuer: ISSUER,
        currentDate: new Date(clock.now()),
      })
      expect(verified.payload.sub).toBe(user.id)
      expect(verified.protectedHeader.kid).toBe(decodeProtectedHeader(user.accessToken).kid)
      // the same library refuses the token when told another issuer: the claim is checked, not merely carried
      await expect(
        jwtVerify(user.accessToken, jwks, { algorithms: [algorithm], issuer: 'https://elsewhere.example' }),
      ).rejects.toThrow(/iss/)
    })

    it.skipIf(pyjwtMissing !== null)(
      'R5.5.6 verify with PyJWT, fetching the JWKS by kid, in another language',
      async () => {
        const verdict = await verifyWithPyJwt(jwksUrl, algorithm, user.accessToken, ISSUER)
        expect(verdict).toMatchObject({
          ok: true,
          claims: { sub: user.id, token_type: 'Access', iss: ISSUER },
          kid: decodeJwt(user.accessToken).header.kid,
        })
        // and refuses what it must: a signature of another key, and an HS256 token under the same kid
        const forged = `${user.accessToken.slice(0, user.accessToken.lastIndexOf('.'))}.${Buffer.alloc(64, 7).toString('base64url')}`
        expect(await verifyWithPyJwt(jwksUrl, algorithm, forged, ISSUER)).toMatchObject({ ok: false })
      },
    )

    it('R5.5.6 refuse an HS256 access token, even one signed with AUTH_JWT_SECRET', async () => {
      const { claims } = decodeJwt(user.accessToken)
      const hs256 = createHs256Signer(TEST_SECRET)(claims)
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(hs256) })
      expectError(me, 401, MESSAGES.accessTokenInvalid)
      expect(me.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    })

    it('R5.5.6 refuse a header that names none, HS256, RS256, another algorithm or an unknown kid', async () => {
      const [, payload, signature] = user.accessToken.split('.')
      const { kid } = decodeJwt(user.accessToken).header
      const other = algorithm === 'EdDSA' ? 'ES256' : 'EdDSA'
      const headers = [
        { alg: 'none', typ: 'JWT', kid },
        { alg: 'none', typ: 'JWT' },
        { alg: 'HS256', typ: 'JWT', kid },
        { alg: 'RS256', typ: 'JWT', kid },
        { alg: other, typ: 'JWT', kid },
        { alg: algorithm, typ: 'JWT', kid: 'not-a-key-of-this-service' },
      ]
      for (const header of headers) {
        const encoded = Buffer.from(JSON.stringify(header)).toString('base64url')
        for (const token of [`${encoded}.${payload}.${signature}`, `${encoded}.${payload}.`]) {
          const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(token) })
          expectError(me, 401, MESSAGES.accessTokenInvalid)
        }
      }
    })
  })

  it('R5.5.7 a rotated key keeps the tokens it signed valid until they expire; without it they end at once', async () => {
    const instance = await sqlite.setup()
    const started = clock.now()
    const running: TestService[] = []
    try {
      const first = await keyFiles('first')
      const second = await keyFiles('second')
      const before = await listening({ AUTH_JWT_PRIVATE_KEY_FILE: first.privateFile }, instance)
      const user = await registerUser(before.service.app)
      await before.service.close()
      expect(decodeJwt(user.accessToken).claims.iat * 1000).toBe(Math.floor(started / 1000) * 1000)

      // a minute later, the restart with the next key, the first one's public key among the previous ones
      clock.advance(60_000)
      const after = await listening(
        {
          AUTH_JWT_PRIVATE_KEY_FILE: second.privateFile,
          AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES: first.publicFile,
        },
        instance,
      )
      running.push(after.service)
      const me = (token: string) => call(after.service.app, 'GET', '/auth/me', { headers: bearer(token) })
      expect((await me(user.accessToken)).status).toBe(200)
      const { keys } = (await call(after.service.app, 'GET', '/.well-known/jwks.json')).body
      expect(keys.map((key: { kid: string }) => key.kid)[1]).toBe(decodeJwt(user.accessToken).header.kid)
      const jwks = createRemoteJWKSet(new URL(after.jwksUrl))
      const options = { algorithms: [algorithm], currentDate: new Date(clock.now()) }
      expect((await jwtVerify(user.accessToken, jwks, options)).payload.sub).toBe(user.id)
      const again = await call(after.service.app, 'POST', '/auth/login', {
        body: { email: user.email, password: user.password },
      })
      const newer = again.body.data.access_token as string
      expect(decodeJwt(newer).header.kid).toBe(keys[0].kid)
      expect((await jwtVerify(newer, jwks, options)).payload.sub).toBe(user.id)

      // the earlier token's exp: it is refused from then on; the newer one, issued a minute later, still serves
      clock.set(decodeJwt(user.accessToken).claims.exp * 1000)
      expectError(await me(user.accessToken), 401, MESSAGES.accessTokenInvalid)
      expect((await me(newer)).status).toBe(200)

      // the next key alone: the earlier token, not yet expired, is refused at once (a key removed too early)
      clock.set(started + 120_000)
      const withoutPrevious = await listening({ AUTH_JWT_PRIVATE_KEY_FILE: second.privateFile }, instance)
      running.push(withoutPrevious.service)
      const refused = await call(withoutPrevious.service.app, 'GET', '/auth/me', {
        headers: bearer(user.accessToken),
      })
      expectError(refused, 401, MESSAGES.accessTokenInvalid)
      expect(
        (await call(withoutPrevious.service.app, 'GET', '/auth/me', { headers: bearer(newer) })).status,
      ).toBe(200)
    } finally {
      for (const service of running) await service.close()
      await instance.teardown()
    }
  })
})
