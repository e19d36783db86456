import { afterEach, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, expectError } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, TEST_BASE_PATH, type TestService } from '../support/test-service.js'

// docs/api.md §4.13: GET /.well-known/jwks.json and GET /.well-known/openid-configuration, public, cached, under
// BASE_PATH like every route (the project base-path runs this file again under /api)

const backend = backends[0]!
const CACHE_CONTROL = 'public, max-age=300'

describe('§4.13 the well-known documents', () => {
  let service: TestService | undefined
  const start = async (env: Record<string, string> = {}) => {
    service = await startTestService(backend, { env })
    return service.app
  }
  afterEach(async () => {
    await service?.close()
    service = undefined
  })

  it('R4.13.1 HS256 (the default): an empty key set, for the secret is never published', async () => {
    const app = await start()
    const jwks = await call(app, 'GET', '/.well-known/jwks.json')
    expect(jwks.status, jwks.text).toBe(200)
    expect(jwks.text).toBe('{"keys":[]}')
    expect(jwks.headers['content-type']).toMatch(/^application\/json/)
    expect(jwks.headers['cache-control']).toBe(CACHE_CONTROL)
    const head = await app.inject({ method: 'HEAD', url: '/.well-known/jwks.json' })
    expect(head.statusCode).toBe(200)
  })

  it('R4.13.1 EdDSA: the public key of the signing key, with its kid, alg and use, and nothing private', async () => {
    // no AUTH_JWT_PRIVATE_KEY_FILE outside production: the key pair made in DATA_DIR
    const app = await start({ AUTH_JWT_ALGORITHM: 'EdDSA' })
    const { body, headers } = await call(app, 'GET', '/.well-known/jwks.json')
    expect(headers['cache-control']).toBe(CACHE_CONTROL)
    expect(body).toEqual({
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    })
  })

  it('R4.13.2 the discovery document: in development, the URL of localhost, PORT and BASE_PATH', async () => {
    const app = await start({ PORT: '4321' })
    const document = await call(app, 'GET', '/.well-known/openid-configuration')
    expect(document.status, document.text).toBe(200)
    expect(document.headers['cache-control']).toBe(CACHE_CONTROL)
    expect(document.body).toEqual({
      issuer: `http://localhost:4321${TEST_BASE_PATH}`,
      jwks_uri: `http://localhost:4321${TEST_BASE_PATH}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ['HS256'],
    })
  })

  it('R4.13.2 PUBLIC_URL and AUTH_JWT_ISSUER name the issuer and the JWKS; no request header changes them', async () => {
    const app = await start({
      AUTH_JWT_ALGORITHM: 'ES256',
      PUBLIC_URL: 'https://auth.example.com/tessera/',
      AUTH_JWT_ISSUER: 'https://issuer.example.com',
      TRUST_PROXY: '127.0.0.1',
    })
    const expected = {
      issuer: 'https://issuer.example.com',
      jwks_uri: 'https://auth.example.com/tessera/.well-known/jwks.json',
      id_token_signing_alg_values_supported: ['ES256'],
    }
    for (const headers of <Record<string, string>[]>[
      {},
      { host: 'attacker.example' },
      { 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'http' },
    ]) {
      expect((await call(app, 'GET', '/.well-known/openid-configuration', { headers })).body).toEqual(
        expected,
      )
    }
  })

  it('R4.13.2 without AUTH_JWT_ISSUER the issuer is PUBLIC_URL', async () => {
    const app = await start({ PUBLIC_URL: 'https://auth.example.com' })
    expect((await call(app, 'GET', '/.well-known/openid-configuration')).body.issuer).toBe(
      'https://auth.example.com',
    )
  })

  it('R4.13.2 production without PUBLIC_URL (HS256): no discovery document, the empty key set still served', async () => {
    const app = await start({ NODE_ENV: 'production' })
    expectError(await call(app, 'GET', '/.well-known/openid-configuration'), 404, MESSAGES.notFound)
    expect((await call(app, 'GET', '/.well-known/jwks.json')).body).toEqual({ keys: [] })
  })
})
